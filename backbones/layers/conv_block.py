"""PatchConvNet's trunk block (thesis §5.2.1, Fig. 5.1) on (B, C, H, W) maps:

    x = x + LayerScale(conv1x1(SE(GELU(dwconv3x3(GELU(conv1x1(norm(x))))))))

The official ``Conv_blocks_se`` works on (B, N, C) tokens and reshapes them to maps and back in every block;
here the trunk stays a map in channels-last memory, where the LayerNorm over channels is a view (no copy) and
the convolutions run NHWC. Key names: ``norm1``, ``conv1``, ``dwconv``, ``se.fc1`` / ``se.fc2`` (timm's
``SEModule``), ``conv2``, ``ls1.gamma``; ``backbones.checkpoint`` maps the official ``attn.qkv_pos.{0,2,4,5}``.
"""
import torch
from timm.layers import LayerNorm2d, SEModule
from torch import nn

from .blocks import make_drop_path, residual
from .mlp import LayerScale2d

NORMS = ('ln', 'bn')


def trunk_norm(kind: str, dim: int, eps: float = 1e-6) -> nn.Module:
    """'ln': LayerNorm over the channels (the thesis' default); 'bn': BatchNorm (Table 5.8, +0.2-0.7 top-1,
    but its batch statistics need synchronising across GPUs)."""
    if kind not in NORMS:
        raise ValueError(f"PatchConvNet norm must be one of {NORMS}, got {kind!r}")
    return LayerNorm2d(dim, eps=eps) if kind == 'ln' else nn.BatchNorm2d(dim)


class PatchConvBlock(nn.Module):
    """The residual convolutional block: width ``dim`` in and out, same resolution."""

    def __init__(self, dim: int, init_values: float = 1e-4, drop_path: float = 0., norm: str = 'ln',
                 norm_eps: float = 1e-6, se_ratio: float = 0.25):
        super().__init__()
        self.norm1 = trunk_norm(norm, dim, norm_eps)
        self.conv1 = nn.Conv2d(dim, dim, kernel_size=1)
        self.act1 = nn.GELU()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=3, padding=1, groups=dim)
        self.act2 = nn.GELU()
        # the official squeeze-excite (timm's efficientnet SqueezeExcite): ReLU, sigmoid, round(dim / 4) wide
        self.se = SEModule(dim, rd_channels=round(dim * se_ratio))
        self.conv2 = nn.Conv2d(dim, dim, kernel_size=1)
        self.ls1 = LayerScale2d(dim, init_values)
        self.drop_path1 = make_drop_path(drop_path)

    def forward(self, x: torch.Tensor, grid=None) -> torch.Tensor:
        """``grid``: unused (the map is its own grid), taken as the token blocks take it."""
        y = self.act2(self.dwconv(self.act1(self.conv1(self.norm1(x)))))
        return residual(x, self.conv2(self.se(y)), self.ls1, self.drop_path1)
