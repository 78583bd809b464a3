"""ViTDet's simple feature pyramid (Li et al., 2022, "Exploring Plain Vision Transformer Backbones for Object
Detection", §3): the multi-scale maps Mask R-CNN expects, built from the last map of a plain ViT alone.

Each level rescales the stride-p map (deconvolutions up, max-pooling down), then projects it to
``out_channels`` with a 1x1 and a 3x3 conv, each followed by LayerNorm; a stride-2 max-pool of the coarsest
level adds the extra level of the RPN (detectron2's ``LastLevelMaxPool``, mmdet FPN's ``num_outs``).
"""
from typing import Sequence, Tuple

import torch
import torch.nn.functional as F
from mmcv.cnn import ConvModule, build_norm_layer
from mmengine.model import BaseModule
from torch import nn

from vitbench.refusal import RefusalValueError
from vitbench.registry import MODELS


@MODELS.register_module(name='LN2d')
class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of (B, C, H, W) maps: ViTDet's "LN" in necks and heads.

    mmcv has no 2-D LayerNorm; configs use it as ``norm_cfg=dict(type='vitbench.LN2d', eps=1e-6)``.
    The output is contiguous (NCHW): mmcv's CPU RoIAlign reads its input's memory as NCHW whatever the
    strides, so the channels-last view the permutation leaves would be pooled as garbage.
    """
    _abbr_ = 'ln'  # mmcv names the layer after this (ConvModule's ``.ln``)

    def __init__(self, num_channels: int, eps: float = 1e-6, **kwargs):
        super().__init__(num_channels, eps=eps, **kwargs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2).contiguous()


SCALES = (4.0, 2.0, 1.0, 0.5, 0.25)


@MODELS.register_module()
class SimpleFeaturePyramid(BaseModule):
    """Pyramid levels at ``scales`` times the resolution of the backbone's last map, plus extra levels.

    Args:
        in_channels: width of the backbone's maps (its ``embed_dim``).
        out_channels: width of every level (256 in ViTDet).
        scales: resolution of each level relative to the input map, finest first, from {4, 2, 1, 0.5, 0.25}.
            (4, 2, 1, 0.5) turns a patch-16 backbone into strides 4-32; (2, 1, 0.5, 0.25) does the same for
            patch 8.
        num_outs: levels returned; those beyond ``len(scales)`` are stride-2 max-pools of the last level.
        norm_cfg: norm after the first deconvolution of the 4x level and after every conv (None: conv bias
            instead, as detectron2 with ``norm=''``).
    """

    def __init__(self, in_channels: int, out_channels: int = 256,
                 scales: Sequence[float] = (4.0, 2.0, 1.0, 0.5), num_outs: int = 5,
                 norm_cfg=dict(type='vitbench.LN2d', eps=1e-6), init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        scales = [float(s) for s in scales]
        bad = [s for s in scales if s not in SCALES]
        if bad:
            raise ValueError(f'SimpleFeaturePyramid: model.neck.scales {bad} are not supported; each scale must be '
                             f'one of {SCALES} (deconvolutions up, max-pooling down)')
        if scales != sorted(scales, reverse=True):
            raise ValueError(f'SimpleFeaturePyramid: model.neck.scales must go from the finest level to the coarsest, '
                             f'got {scales}')
        if num_outs < len(scales):
            raise ValueError(f'SimpleFeaturePyramid: model.neck.num_outs={num_outs} is fewer than the {len(scales)} '
                             'scales')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.scales, self.num_outs = tuple(scales), num_outs

        self.levels = nn.ModuleList()
        for scale in scales:
            rescale, width = self._rescale(scale, in_channels, norm_cfg)
            self.levels.append(nn.Sequential(
                rescale,
                ConvModule(width, out_channels, 1, norm_cfg=norm_cfg, act_cfg=None),
                ConvModule(out_channels, out_channels, 3, padding=1, norm_cfg=norm_cfg, act_cfg=None)))

    @staticmethod
    def _rescale(scale: float, dim: int, norm_cfg) -> Tuple[nn.Module, int]:
        """The resampling layers of one level and their output width (halved at each 2x deconvolution)."""
        if scale == 4:
            norm = build_norm_layer(norm_cfg, dim // 2)[1] if norm_cfg else nn.Identity()
            return nn.Sequential(nn.ConvTranspose2d(dim, dim // 2, 2, stride=2), norm, nn.GELU(),
                                 nn.ConvTranspose2d(dim // 2, dim // 4, 2, stride=2)), dim // 4
        if scale == 2:
            return nn.ConvTranspose2d(dim, dim // 2, 2, stride=2), dim // 2
        if scale == 1:
            return nn.Identity(), dim
        return nn.MaxPool2d(kernel_size=int(1 / scale), stride=int(1 / scale)), dim

    def forward(self, inputs: Sequence[torch.Tensor]) -> Tuple[torch.Tensor, ...]:
        """``inputs``: the backbone's tuple of maps; only the last one is used."""
        x = inputs[-1]
        if x.shape[1] != self.in_channels:
            raise RefusalValueError(f'SimpleFeaturePyramid: expected a map with in_channels={self.in_channels} '
                                    f'channels, got {tuple(x.shape)} (set model.neck.in_channels={x.shape[1]}, the '
                                    'backbone width)')
        outs = [level(x).contiguous() for level in self.levels]  # (a no-op after LN2d) RoIAlign needs NCHW
        while len(outs) < self.num_outs:
            outs.append(F.max_pool2d(outs[-1], kernel_size=1, stride=2))
        return tuple(outs)
