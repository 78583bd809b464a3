"""Augmentations of self-supervised pre-training with several views per image (MoCo-v3), as registered pipeline
steps on PIL images (torchvision underneath), and :class:`MultiView`, which runs one pipeline per view.

MoCo-v3's two asymmetric views (MAE-lite's ``ssl_transform``, the official ``main_moco.py`` ``augmentation1`` /
``augmentation2`` in another order of steps that commute: blur and grayscale are both linear, flip and
solarisation act on different things):

    view 1: RandomResizedCrop(scale 0.08-1, bilinear) -> ColorJitter(0.4, 0.4, 0.2, 0.1) p 0.8
            -> Gaussian blur p 1.0 -> grayscale p 0.2 -> flip
    view 2: the same with blur p 0.1, then solarisation p 0.2

:class:`pretrain.transforms.PackInputs` then stacks the views into one (views, 3, H, W) tensor per image, the
batch being (B, views, 3, H, W); ``ClsDataPreprocessor`` normalises every view.
"""
import random
from typing import List, Sequence

from PIL import ImageFilter, ImageOps
from torchvision import transforms as T

from vitbench.registry import TRANSFORMS

from .transforms import _PILTransform


def _check_prob(name: str, prob: float) -> None:
    if not 0. <= prob <= 1.:
        raise ValueError(f'{name}: prob must be in [0, 1], got {prob}')


class _Blur:
    def __init__(self, sigma):
        self.sigma = tuple(sigma)

    def __call__(self, img):
        return img.filter(ImageFilter.GaussianBlur(radius=random.uniform(*self.sigma)))

    def __repr__(self):
        return f'GaussianBlur(sigma={self.sigma})'


class _Solarize:
    def __call__(self, img):
        return ImageOps.solarize(img)


@TRANSFORMS.register_module()
class RandomColorJitter(_PILTransform):
    """With probability ``prob``, torchvision's ColorJitter(brightness, contrast, saturation, hue)
    (MoCo-v3 / SimCLR: 0.4, 0.4, 0.2, 0.1 with p 0.8)."""

    def __init__(self, brightness: float = 0.4, contrast: float = 0.4, saturation: float = 0.2, hue: float = 0.1,
                 prob: float = 0.8):
        _check_prob('RandomColorJitter', prob)
        self.transform = T.RandomApply([T.ColorJitter(brightness, contrast, saturation, hue)], p=prob)


@TRANSFORMS.register_module()
class RandomGrayscale(_PILTransform):
    """Grayscale (3 equal channels) with probability ``prob`` (MoCo-v3: 0.2)."""

    def __init__(self, prob: float = 0.2):
        _check_prob('RandomGrayscale', prob)
        self.transform = T.RandomGrayscale(p=prob)


@TRANSFORMS.register_module()
class GaussianBlur(_PILTransform):
    """With probability ``prob``, a PIL Gaussian blur of radius uniform in ``sigma`` (SimCLR / MoCo-v3:
    [0.1, 2.0]; MoCo-v3 p 1.0 on view 1, 0.1 on view 2)."""

    def __init__(self, prob: float = 1.0, sigma: Sequence[float] = (0.1, 2.0)):
        _check_prob('GaussianBlur', prob)
        if len(sigma) != 2 or not 0 < sigma[0] <= sigma[1]:
            raise ValueError(f'GaussianBlur: sigma must be (min, max) with 0 < min <= max, got {sigma}')
        self.transform = T.RandomApply([_Blur(sigma)], p=prob)


@TRANSFORMS.register_module()
class Solarize(_PILTransform):
    """With probability ``prob``, PIL solarisation at threshold 128 (BYOL / MoCo-v3: p 0.2 on view 2)."""

    def __init__(self, prob: float = 0.2):
        _check_prob('Solarize', prob)
        self.transform = T.RandomApply([_Solarize()], p=prob)


@TRANSFORMS.register_module()
class MultiView:
    """Several views of one image: each of ``views`` (a list of transform configs, built from the vitbench
    TRANSFORMS) runs on its own copy of the results after loading; ``results['img']`` becomes the list of the
    views' images, in order. A view whose pipeline drops the sample (returns None) drops it.

        dict(type='MultiView', views=[[dict(type='RandomResizedCrop', size=224), ...], [...]])
    """

    def __init__(self, views: Sequence[Sequence[dict]]):
        if not views:
            raise ValueError('MultiView: views is empty; give one list of transforms per view')
        self.views: List[list] = [[TRANSFORMS.build(t) if isinstance(t, dict) else t for t in view] for view in views]

    def __call__(self, results: dict):
        images = []
        for view in self.views:
            out = dict(results)
            for transform in view:
                out = transform(out)
                if out is None:
                    return None
            images.append(out['img'])
        results['img'] = images
        return results

    def __repr__(self):
        return f'MultiView({self.views})'
