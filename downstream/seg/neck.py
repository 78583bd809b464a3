"""MAE-lite's narrowed Feature2Pyramid: the 4 / 2 / 1 / 0.5 rescale neck of a plain ViT whose levels also project
the maps to ``int(embed_dim * scale_factor)`` channels (MAE-lite's Semantic FPN for ViT-Tiny: 192 -> 48).

As wangsr126/MAE-Lite projects/eval_tools/seg/featurepyramid.py (``Feature2Pyramid_Scale``), layer by layer:

- x4: deconv 2x2 / 2 (embed_dim -> width), norm, GELU, deconv 2x2 / 2 (width -> width);
- x2: one deconv 2x2 / 2 (embed_dim -> width), without norm or activation;
- x1: a 1x1 conv (embed_dim -> width);
- x0.5: a 1x1 conv (embed_dim -> width), then a 2x2 / 2 max-pool.

mmseg's ``Feature2Pyramid`` (scale 1) keeps the width and has a norm and GELU after its x2 deconv; with
``scale_factor=1`` this neck is still not it (no x2 norm, 1x1 convs at x1 and x0.5), as MAE-lite's is not.
"""
from typing import Sequence, Tuple

import torch
from mmcv.cnn import build_norm_layer
from mmengine.model import BaseModule
from torch import nn

from vitbench.registry import MODELS

RESCALES = (4, 2, 1, 0.5)


def scaled_width(embed_dim: int, scale_factor: float) -> int:
    """The neck's output width: ``int(embed_dim * scale_factor)``, as MAE-lite's code writes it."""
    return int(embed_dim * scale_factor)


@MODELS.register_module()
class ScaledFeature2Pyramid(BaseModule):
    """Four maps of a plain ViT (stride p) -> maps at strides p/4, p/2, p, 2p, each ``scaled_width`` wide."""

    def __init__(self, embed_dim: int, rescales: Sequence[float] = RESCALES, scale_factor: float = 0.25,
                 norm_cfg=dict(type='SyncBN', requires_grad=True), init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        if list(rescales) != list(RESCALES):
            raise ValueError(f'model.neck.rescales={list(rescales)}: this neck (MAE-lite\'s) builds exactly '
                             f'{list(RESCALES)}')
        width = scaled_width(embed_dim, scale_factor)
        if width < 1:
            raise ValueError(f'model.neck.scale_factor={scale_factor} leaves {embed_dim} channels at width {width}')
        self.rescales, self.out_channels = list(rescales), width
        self.upsample_4x = nn.Sequential(
            nn.ConvTranspose2d(embed_dim, width, kernel_size=2, stride=2),
            build_norm_layer(norm_cfg, width)[1],
            nn.GELU(),
            nn.ConvTranspose2d(width, width, kernel_size=2, stride=2))
        self.upsample_2x = nn.Sequential(nn.ConvTranspose2d(embed_dim, width, kernel_size=2, stride=2))
        self.identity = nn.Conv2d(embed_dim, width, kernel_size=1)
        self.downsample_2x = nn.Sequential(nn.Conv2d(embed_dim, width, kernel_size=1),
                                           nn.MaxPool2d(kernel_size=2, stride=2))

    def forward(self, inputs: Sequence[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
        if len(inputs) != len(self.rescales):
            raise ValueError(f'{type(self).__name__} takes {len(self.rescales)} maps, got {len(inputs)}')
        ops = (self.upsample_4x, self.upsample_2x, self.identity, self.downsample_2x)
        return tuple(op(x) for op, x in zip(ops, inputs))
