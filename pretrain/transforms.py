"""ImageNet transforms as registered mmengine pipeline steps.

A pipeline works on a results dict: :class:`LoadImage` puts a PIL image under ``'img'``, the augmentations
(torchvision / timm underneath) replace it, and :class:`PackInputs` turns it into a uint8 (3, H, W) tensor
plus the label. Normalisation, Mixup/CutMix and random erasing happen on whole batches in
:class:`pretrain.preprocessor.ClsDataPreprocessor`, as in mmpretrain.

DeiT III's own augmentations are here (the official ``augment.py`` has no library equivalent):
:class:`SimpleRandomCrop` and :class:`ThreeAugment`, with the switches of the thesis' ablations (Tables 6.2-6.5):
:class:`TrainCrop` (RandomResizedCrop or Simple Random Crop, by ``kind``), ``ThreeAugment(ops=...)`` (any subset of
its three operations), and the learned policies it is compared with, :class:`RandAugment`, :class:`AutoAugment`
(timm) and :class:`TrivialAugment` (torchvision), each a step that takes the place of ``ThreeAugment``.
"""
import math
import random

import numpy as np
import torch
from PIL import Image, ImageFilter, ImageOps
from mmengine.logging import print_log
from timm.data import auto_augment
from timm.data.transforms import RandomResizedCropAndInterpolation, str_to_pil_interp
from torchvision import transforms as T

from vitbench.registry import TRANSFORMS

IMAGENET_MEAN_255 = (123.675, 116.28, 103.53)


class ImageReadError(OSError):
    """An image file that cannot be decoded; the message names the file."""


# An evaluation cannot draw another sample for an unreadable one (every image is scored once, on every rank):
# datasets in test mode set this key, and LoadImage(skip_corrupt=True) then puts a black stand-in labelled
# SKIPPED_LABEL in its place, which the metrics (pretrain/metrics.py) leave out and count.
STAND_IN_IF_UNREADABLE = 'stand_in_if_unreadable'
SKIPPED_LABEL = -1
_COUNT_SLOTS = 256  # skip counters: one per dataloader worker process (slot 0: the main process)


@TRANSFORMS.register_module()
class LoadImage:
    """Read ``results['img_path']`` as an RGB PIL image into ``results['img']``.

    An unreadable or corrupt file raises :class:`ImageReadError` naming it. With ``skip_corrupt=True``
    the file is logged and skipped instead: in training mmengine's dataset draws another sample; in an
    evaluation a stand-in takes its place, left out of the metric and counted in its results
    (``skipped_images``). Each skip is logged with the total so far over all the dataloader's worker processes,
    so a silently shrinking dataset cannot go unnoticed.
    """

    def __init__(self, skip_corrupt: bool = False):
        self.skip_corrupt = skip_corrupt
        # In shared memory, which forked or spawned dataloader workers share: each process counts in its own
        # slot (no lost updates), the sum is the total.
        self._skipped = torch.zeros(_COUNT_SLOTS, dtype=torch.int64).share_memory_() if skip_corrupt else \
            torch.zeros(1, dtype=torch.int64)

    @property
    def num_skipped(self) -> int:
        """Files skipped so far by this transform, in every process of its dataloader."""
        return int(self._skipped.sum())

    def __call__(self, results: dict):
        path = results['img_path']
        try:
            with Image.open(path) as img:
                results['img'] = img.convert('RGB')  # convert() decodes the whole file
        except (OSError, ValueError, Image.DecompressionBombError) as e:
            if not self.skip_corrupt:
                raise ImageReadError(f'cannot read image {path}: {type(e).__name__}: {e} '
                                     f'(fix or remove the file, or set LoadImage(skip_corrupt=True))') from e
            worker = torch.utils.data.get_worker_info()
            self._skipped[(0 if worker is None else worker.id + 1) % len(self._skipped)] += 1
            stand_in = results.get(STAND_IN_IF_UNREADABLE, False)
            print_log(f'skipped unreadable image {path} ({type(e).__name__}: {e})'
                      f'{"; left out of the evaluation" if stand_in else ""}; {self.num_skipped} skipped so far '
                      'in all', logger='current', level=30)
            if not stand_in:
                return None
            results['img'], results['gt_label'] = Image.new('RGB', (256, 256)), SKIPPED_LABEL
        return results


class _PILTransform:
    """Applies ``self.transform`` (any PIL -> PIL callable) to ``results['img']``."""
    transform = None

    def __call__(self, results: dict) -> dict:
        results['img'] = self.transform(results['img'])
        return results

    def __repr__(self):
        return f'{type(self).__name__}({self.transform})'


@TRANSFORMS.register_module()
class RandomResizedCrop(_PILTransform):
    """Inception crop (timm's): random area ``scale`` and aspect ``ratio``, resized to ``size``."""

    def __init__(self, size: int, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), interpolation: str = 'bicubic'):
        self.transform = RandomResizedCropAndInterpolation(size, tuple(scale), tuple(ratio), interpolation)


@TRANSFORMS.register_module()
class SimpleRandomCrop(_PILTransform):
    """DeiT III's Simple Random Crop: resize the short side to ``size``, reflect-pad ``padding`` pixels,
    take a random ``size`` x ``size`` crop (official ``augment.py``). Keeps almost the whole object, which
    suits IN-21k; RandomResizedCrop is better on IN-1k."""

    def __init__(self, size: int, padding: int = 4, interpolation: str = 'bicubic'):
        self.transform = T.Compose([
            T.Resize(size, interpolation=str_to_pil_interp(interpolation)),
            T.RandomCrop(size, padding=padding, padding_mode='reflect')])


@TRANSFORMS.register_module()
class TrainCrop(_PILTransform):
    """The training crop with DeiT III's switch (thesis §6.2.3, Table 6.5): ``kind='rrc'``
    (:class:`RandomResizedCrop`: ``scale``, ``ratio``) or ``kind='src'`` (:class:`SimpleRandomCrop`:
    ``padding``). One step whose kind is a key, so that ``--cfg-options ...pipeline.1.kind=src`` switches a recipe's
    crop without its other arguments failing the other class; each kind ignores the other's arguments."""
    KINDS = {'rrc': 'RandomResizedCrop', 'src': 'SimpleRandomCrop'}

    def __init__(self, size: int, kind: str = 'rrc', scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), padding: int = 4,
                 interpolation: str = 'bicubic'):
        if kind not in self.KINDS:
            raise ValueError(f"TrainCrop: kind must be one of {', '.join(self.KINDS)} (RandomResizedCrop, Simple "
                             f"Random Crop), got {kind!r}")
        self.kind = kind
        crop = RandomResizedCrop(size, scale, ratio, interpolation) if kind == 'rrc' else \
            SimpleRandomCrop(size, padding, interpolation)
        self.transform = crop.transform


@TRANSFORMS.register_module()
class RandomHorizontalFlip(_PILTransform):

    def __init__(self, prob: float = 0.5):
        self.transform = T.RandomHorizontalFlip(prob)


@TRANSFORMS.register_module()
class ColorJitter(_PILTransform):
    """Brightness, contrast and saturation jitter of the same ``strength`` (DeiT III: 0.3), as timm's
    ``color_jitter=0.3`` (no hue jitter)."""

    def __init__(self, strength: float = 0.3):
        self.transform = T.ColorJitter(strength, strength, strength)


class _Solarize:
    def __call__(self, img):
        return ImageOps.solarize(img)


class _GaussianBlur:
    """PIL Gaussian blur with a random radius in [0.1, 2.0], as DeiT III's."""

    def __call__(self, img):
        return img.filter(ImageFilter.GaussianBlur(radius=random.uniform(0.1, 2.0)))


def _unchanged(img):  # a function, not a lambda: dataloader workers started by spawn pickle the pipeline
    return img


_THREE_AUGMENT_OPS = {'grayscale': lambda: T.Grayscale(num_output_channels=3), 'solarization': _Solarize,
                      'gaussian_blur': _GaussianBlur}


@TRANSFORMS.register_module()
class ThreeAugment(_PILTransform):
    """DeiT III's 3-Augment: per image, one of grayscale, solarization or Gaussian blur, chosen uniformly.

    The recipe adds :class:`ColorJitter` (0.3) and a horizontal flip as separate steps. ``ops`` keeps a subset (the
    ablation of thesis Table 6.2), still one per image chosen uniformly among those kept; ``ops=[]`` applies
    nothing (Table 6.2's first row: colour jitter and flip alone).
    """
    OPS = tuple(_THREE_AUGMENT_OPS)

    def __init__(self, ops=OPS):
        unknown = [op for op in ops if op not in _THREE_AUGMENT_OPS]
        if isinstance(ops, str) or unknown:
            raise ValueError(f"ThreeAugment: ops must be a list of {', '.join(self.OPS)}, got {ops!r}")
        self.ops = tuple(ops)
        self.transform = T.RandomChoice([_THREE_AUGMENT_OPS[op]() for op in self.ops]) if self.ops else _unchanged

    def __repr__(self):
        return f'ThreeAugment(ops={list(self.ops)})'


@TRANSFORMS.register_module()
class RandAugment(_PILTransform):
    """timm's RandAugment from a config string, e.g. 'rand-m9-mstd0.5-inc1' (DeiT) or
    'rand-m10-mstd0.5-inc1' (MAE-lite fine-tuning)."""

    def __init__(self, config_str: str = 'rand-m9-mstd0.5-inc1', img_size: int = 224,
                 interpolation: str = 'bicubic'):
        self.transform = auto_augment.rand_augment_transform(config_str, _timm_hparams(img_size, interpolation))
        _keep_zero_bit_posterize(self.transform.ops)


def _timm_hparams(img_size: int, interpolation: str) -> dict:
    """The hparams timm's create_transform gives its auto-augment policies (translate 45% of the size, the mean
    colour as fill)."""
    return dict(translate_const=int(img_size * 0.45), img_mean=tuple(round(x) for x in IMAGENET_MEAN_255),
                interpolation=str_to_pil_interp(interpolation))


@TRANSFORMS.register_module()
class AutoAugment(_PILTransform):
    """timm's AutoAugment from a config string: 'original' (the ImageNet policy of Cubuk et al. 2019, thesis
    Table 6.3), 'v0' (TPU EfficientNet's), optionally '-mstd0.5'. As timm's ``create_transform(auto_augment=...)``
    builds it."""

    def __init__(self, config_str: str = 'original', img_size: int = 224, interpolation: str = 'bicubic'):
        self.transform = auto_augment.auto_augment_transform(config_str, _timm_hparams(img_size, interpolation))
        _keep_zero_bit_posterize([op for sub_policy in self.transform.policy for op in sub_policy])


@TRANSFORMS.register_module()
class TrivialAugment(_PILTransform):
    """TrivialAugment (Müller and Hutter, ICCV 2021; thesis Table 6.3): one operation of the wide set per image at
    a uniformly drawn magnitude; torchvision's ``TrivialAugmentWide`` (timm has none)."""

    def __init__(self, interpolation: str = 'bicubic'):
        self.transform = T.TrivialAugmentWide(interpolation=T.InterpolationMode(interpolation), fill=[
            round(x) for x in IMAGENET_MEAN_255])


def _keep_zero_bit_posterize(ops) -> None:
    for op in ops:
        if op.aug_fn is auto_augment.posterize:
            op.aug_fn = _posterize


def _posterize(img, bits_to_keep, **kwargs):
    """timm's posterize, where keeping 0 bits gives a black image, as older Pillow did; Pillow 13 raises
    instead, and magnitude noise reaches 0 bits with 'inc1' policies such as DeiT's."""
    if bits_to_keep <= 0:
        return Image.new(img.mode, img.size)
    return auto_augment.posterize(img, bits_to_keep, **kwargs)


@TRANSFORMS.register_module()
class ResizeCenterCrop(_PILTransform):
    """Test transform: resize the short side to ``size / crop_pct``, centre-crop ``size`` (DeiT: crop_pct
    0.875, DeiT III / CaiT: 1.0)."""

    def __init__(self, size: int, crop_pct: float = 0.875, interpolation: str = 'bicubic'):
        if not 0 < crop_pct <= 1:
            raise ValueError(f'crop_pct must be in (0, 1], got {crop_pct}')
        self.transform = T.Compose([
            T.Resize(math.floor(size / crop_pct), interpolation=str_to_pil_interp(interpolation)),
            T.CenterCrop(size)])


@TRANSFORMS.register_module()
class PackInputs:
    """PIL image -> ``inputs`` (uint8 tensor, 3 x H x W) and ``data_samples`` (label, file path); a list of
    views (:class:`pretrain.ssl_transforms.MultiView`) -> views x 3 x H x W; views of several sizes (DINO's
    multi-crop) -> a list of such tensors, one per run of consecutive views of one size (batched by
    ``default_collate`` into a list of (B, views, 3, H, W)). ``keys``: more fields of the sample to carry into
    ``data_samples`` (Grafit's memory needs ``sample_idx``, the image's index in its dataset)."""

    def __init__(self, keys=()):
        self.keys = tuple(keys)

    @staticmethod
    def _chw(img) -> torch.Tensor:
        return torch.from_numpy(np.ascontiguousarray(np.asarray(img, dtype=np.uint8).transpose(2, 0, 1)))

    def __call__(self, results: dict) -> dict:
        img = results['img']
        if isinstance(img, (list, tuple)):
            views = [self._chw(v) for v in img]
            groups = [[views[0]]]
            for v in views[1:]:
                (groups[-1].append(v) if v.shape == groups[-1][0].shape else groups.append([v]))
            inputs = torch.stack(views) if len(groups) == 1 else [torch.stack(g) for g in groups]
        else:
            inputs = self._chw(img)
        samples = dict(gt_label=torch.tensor(results['gt_label']), img_path=results['img_path'])
        for key in self.keys:
            if key not in results:
                raise KeyError(f"PackInputs: keys names {key!r}, which the sample does not have (it has "
                               f"{sorted(results)})")
            samples[key] = torch.tensor(results[key])
        return dict(inputs=inputs, data_samples=samples)
