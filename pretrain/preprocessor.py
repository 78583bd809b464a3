"""Batch-level preprocessing of classification data: normalisation, then (training only) Mixup / CutMix and
random erasing, all on the whole batch as mmpretrain does. A batch of several views per image
(B, views, 3, H, W) is normalised view by view.

Mixup/CutMix are timm's; they produce soft targets ``data_samples['gt_score']`` (B, num_classes) next to
the hard ``gt_label``. Label smoothing is left to the loss (:class:`pretrain.classifier.ClsLoss`), which
gives the same targets as timm's ``mixup_target(..., smoothing)``.
"""
from typing import Optional

import torch
from mmengine.model import ImgDataPreprocessor
from timm.data import Mixup
from timm.data.random_erasing import RandomErasing

from vitbench.refusal import RefusalValueError
from vitbench.registry import MODELS

IMAGENET_MEAN = (123.675, 116.28, 103.53)
IMAGENET_STD = (58.395, 57.12, 57.375)


@MODELS.register_module()
class ClsDataPreprocessor(ImgDataPreprocessor):
    """Args:
        mean, std: per-channel statistics in pixel units (default: ImageNet's).
        num_classes: size of the soft targets Mixup/CutMix produce.
        mixup_alpha, cutmix_alpha: Beta parameters; 0 disables either (DeiT / DeiT III: 0.8 and 1.0).
        mix_prob, switch_prob: probability of mixing a batch at all, and of CutMix over Mixup when both are on.
        erase_prob: timm random erasing ('pixel' mode) after normalisation (DeiT: 0.25).
    """

    def __init__(self, mean=IMAGENET_MEAN, std=IMAGENET_STD, num_classes: Optional[int] = None,
                 mixup_alpha: float = 0., cutmix_alpha: float = 0., mix_prob: float = 1.0,
                 switch_prob: float = 0.5, erase_prob: float = 0., **kwargs):
        super().__init__(mean=mean, std=std, **kwargs)
        self.mixup = None
        if mixup_alpha > 0 or cutmix_alpha > 0:
            if not num_classes:
                raise ValueError('ClsDataPreprocessor: Mixup/CutMix needs num_classes')
            self.mixup = Mixup(mixup_alpha=mixup_alpha, cutmix_alpha=cutmix_alpha, prob=mix_prob,
                               switch_prob=switch_prob, label_smoothing=0., num_classes=num_classes)
        self.erasing = RandomErasing(erase_prob, mode='pixel', device='cpu') if erase_prob > 0 else None

    def forward(self, data: dict, training: bool = False) -> dict:
        inputs = data['inputs']
        if isinstance(inputs, (list, tuple)) and inputs and all(isinstance(g, torch.Tensor) and g.dim() == 5
                                                                for g in inputs):
            # multi-crop (DINO): one (B, views, 3, H, W) group per crop size, each normalised as below
            groups = [self.forward(dict(data, inputs=g), training) for g in inputs]
            return dict(groups[0], inputs=[g['inputs'] for g in groups])
        if isinstance(inputs, torch.Tensor) and inputs.dim() == 5:  # (B, views, 3, H, W): normalise every view
            if self.mixup is not None or self.erasing is not None:
                raise RefusalValueError('ClsDataPreprocessor: Mixup / CutMix / random erasing act on single-view '
                                        f'batches, got {inputs.shape[1]} views per image (MultiView): set '
                                        'model.data_preprocessor.mixup_alpha, .cutmix_alpha and .erase_prob to 0')
            data = super().forward(dict(data, inputs=inputs.flatten(0, 1)), training)
            data['inputs'] = data['inputs'].unflatten(0, inputs.shape[:2])
            return data
        data = super().forward(data, training)
        if not training:
            return data
        inputs, samples = data['inputs'], data['data_samples']
        if self.mixup is not None:
            if inputs.shape[0] % 2:
                raise RefusalValueError(f'Mixup/CutMix pairs images within a batch and needs an even batch size, '
                                        f'got {inputs.shape[0]}: set an even train_dataloader.batch_size and '
                                        'train_dataloader.drop_last=True')
            inputs, samples['gt_score'] = self.mixup(inputs, samples['gt_label'])
        if self.erasing is not None:
            self.erasing.device = inputs.device
            inputs = self.erasing(inputs)
        data['inputs'] = inputs
        return data


def one_hot_targets(data_samples: dict, num_classes: int) -> torch.Tensor:
    """The soft targets of a batch: Mixup/CutMix's if it was mixed, else one-hot labels."""
    if data_samples.get('gt_score') is not None:
        return data_samples['gt_score']
    return torch.nn.functional.one_hot(data_samples['gt_label'], num_classes).float()
