"""Patch stems: the usual linear patch projection (optionally followed by a norm and / or GELU), the
hierarchical-MLP (hMLP) stem, LeViT's convolutional stem (the stems "Three things" Table 7 compares) and
PatchConvNet's convolutional stem.

The first three map (B, 3, H, W) to (B, H/p * W/p, D) tokens and return the token grid (H/p, W/p) alongside, so
any input whose sides are multiples of the patch size is accepted. The convolutional stem feeds a
convolutional trunk: it returns the (B, D, H/p, W/p) map itself.
"""
import math
from typing import Optional, Tuple, Union

import torch
from timm.layers import LayerNorm2d
from torch import nn


def to_2tuple(x: Union[int, Tuple[int, int]]) -> Tuple[int, int]:
    return (x, x) if isinstance(x, int) else tuple(x)


def _check_divisible(x: torch.Tensor, patch_size: Tuple[int, int]) -> Tuple[int, int]:
    H, W = x.shape[-2:]
    if H % patch_size[0] or W % patch_size[1]:
        raise ValueError(f'input size {H}x{W} is not divisible by the patch size '
                         f'{patch_size[0]}x{patch_size[1]}; resize or pad the images')
    return H // patch_size[0], W // patch_size[1]


STEM_NORMS = ('bn', 'ln')


def stem_norm_layer(norm: str, where: str):
    """BatchNorm2d ('bn') or a LayerNorm over the channels of a (B, C, H, W) map ('ln', eps 1e-6)."""
    if norm not in STEM_NORMS:
        raise ValueError(f"{where}: norm must be one of {STEM_NORMS}, got {norm!r}")
    return nn.BatchNorm2d if norm == 'bn' else (lambda c: LayerNorm2d(c, eps=1e-6))


class PatchEmbed(nn.Module):
    """Linear projection of non-overlapping patches (a conv with kernel = stride = patch size).

    ``norm`` ('bn' / 'ln') and ``act`` (GELU) after the projection: Table 7's "linear + BN", "+ GELU" and
    "+ BN + GELU" rows, in that order (projection, norm, non-linearity). Without them (the default) the keys
    are the usual ``proj.{weight,bias}``; the norm adds ``norm.*``.
    """

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, embed_dim: int = 768,
                 norm: Optional[str] = None, act: bool = False):
        super().__init__()
        self.img_size, self.patch_size = to_2tuple(img_size), to_2tuple(patch_size)
        self.grid_size = (self.img_size[0] // self.patch_size[0], self.img_size[1] // self.patch_size[1])
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=self.patch_size, stride=self.patch_size)
        self.norm = stem_norm_layer(norm, 'PatchEmbed')(embed_dim) if norm is not None else None
        self.act = nn.GELU() if act else None

    def forward(self, x: torch.Tensor):
        grid = _check_divisible(x, self.patch_size)
        x = self.proj(x)
        if self.norm is not None:
            x = self.norm(x)
        if self.act is not None:
            x = self.act(x)
        return x.flatten(2).transpose(1, 2), grid


class LeViTStem(nn.Module):
    """LeViT's convolutional stem (Graham et al., 2021, ``b16`` of the official levit.py), as "Three things"
    Table 7 compares it: four 3x3 convolutions of stride 2 (padding 1, no bias), widths D/8, D/4, D/2, D, each
    followed by a norm ('bn' as LeViT's Conv2d_BN, or 'ln'), GELU between them (Table 7's NL column; LeViT
    itself uses Hardswish). 19.07 GFLOPs for ViT-B at 224 (Table 7). Overlapping kernels: neighbouring patches
    mix, unlike the hMLP stem. Keys ``proj.{0,1,3,4,6,7,9,10}`` (conv, norm; GELU between).
    """

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, embed_dim: int = 768, norm: str = 'bn'):
        super().__init__()
        if to_2tuple(patch_size) != (16, 16) or embed_dim % 8:
            raise ValueError(f'the LeViT stem is defined for 16x16 patches (four stride-2 convolutions) and an '
                             f'embed_dim divisible by 8; got patch_size={patch_size}, embed_dim={embed_dim}')
        norm_layer = stem_norm_layer(norm, 'LeViTStem')
        self.img_size, self.patch_size = to_2tuple(img_size), (16, 16)
        self.grid_size = (self.img_size[0] // 16, self.img_size[1] // 16)
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        widths = [in_chans, embed_dim // 8, embed_dim // 4, embed_dim // 2, embed_dim]
        layers = []
        for i in range(4):
            if i:
                layers.append(nn.GELU())
            layers += [nn.Conv2d(widths[i], widths[i + 1], kernel_size=3, stride=2, padding=1, bias=False),
                       norm_layer(widths[i + 1])]
        self.proj = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor):
        grid = _check_divisible(x, self.patch_size)
        return self.proj(x).flatten(2).transpose(1, 2), grid


class HMLPStem(nn.Module):
    """hMLP stem of "Three things everyone should know about ViTs" (Touvron et al., 2022).

    conv 4x4/s4 -> norm -> GELU -> conv 2x2/s2 -> norm -> GELU -> conv 2x2/s2 -> norm, hidden width D/4, as in
    the official ``hMLP_stem`` (same ``proj.{0,1,3,4,6,7}`` keys). Every kernel equals its stride, so no two
    16x16 patches ever mix: masking patches before or after the stem gives the same tokens, which is what
    makes it usable for masked-image-modelling. ``norm='bn'`` (the paper's best) or ``'ln'`` (batch-size
    independent, e.g. for detection).
    """

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, embed_dim: int = 768, norm: str = 'bn'):
        super().__init__()
        if to_2tuple(patch_size) != (16, 16):
            raise ValueError(f'the hMLP stem is defined for 16x16 patches (4x4 -> 8x8 -> 16x16), '
                             f'got patch_size={patch_size}')
        norm_layer = stem_norm_layer(norm, 'hMLP stem')
        self.img_size, self.patch_size = to_2tuple(img_size), (16, 16)
        self.grid_size = (self.img_size[0] // 16, self.img_size[1] // 16)
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        hidden = embed_dim // 4
        self.proj = nn.Sequential(
            nn.Conv2d(in_chans, hidden, kernel_size=4, stride=4), norm_layer(hidden), nn.GELU(),
            nn.Conv2d(hidden, hidden, kernel_size=2, stride=2), norm_layer(hidden), nn.GELU(),
            nn.Conv2d(hidden, embed_dim, kernel_size=2, stride=2), norm_layer(embed_dim),
        )

    def forward(self, x: torch.Tensor):
        grid = _check_divisible(x, self.patch_size)
        return self.proj(x).flatten(2).transpose(1, 2), grid


class ConvStem(nn.Module):
    """PatchConvNet's stem (LeViT's; thesis §5.2.1): log2(p) 3x3 convs of stride 2 without bias, GELU between
    them, widths D/2^(k-1) ... D/2, D (D/8, D/4, D/2, D for 16x16 patches), as the official ``ConvStem``
    (keys ``proj.{0,2,4,6}`` for its ``proj.{0,2,4,6}.0``).

    The convolutions are padded: any input size works (sides are divided by p, rounded up), as officially.
    """

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, embed_dim: int = 768):
        super().__init__()
        self.img_size, self.patch_size = to_2tuple(img_size), to_2tuple(patch_size)
        p = self.patch_size[0]
        num_convs = int(math.log2(p)) if p > 1 else 0
        if self.patch_size[1] != p or 2 ** num_convs != p or embed_dim % (p // 2):
            raise ValueError(f'the convolutional stem needs square patches of a power of 2 (>= 2) and an '
                             f'embed_dim divisible by patch_size / 2; got patch_size={patch_size}, '
                             f'embed_dim={embed_dim}')
        self.grid_size = (self.img_size[0] // p, self.img_size[1] // p)
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        widths = [in_chans] + [embed_dim // 2 ** (num_convs - 1 - i) for i in range(num_convs)]
        layers = []
        for i in range(num_convs):
            if i:
                layers.append(nn.GELU())
            layers.append(nn.Conv2d(widths[i], widths[i + 1], kernel_size=3, stride=2, padding=1, bias=False))
        self.proj = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor):
        """(B, 3, H, W) -> ((B, D, ceil(H/p), ceil(W/p)) map, its grid)."""
        x = self.proj(x)
        return x, tuple(x.shape[-2:])


class LinearPatchStem(nn.Module):
    """Table 5.7's "conv-stem -> linear projection": each p x p patch projected linearly (one p x p convolution of
    stride p), returning the map like :class:`ConvStem` (keys ``proj.weight``, ``proj.bias``)."""

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, embed_dim: int = 768):
        super().__init__()
        self.img_size, self.patch_size = to_2tuple(img_size), to_2tuple(patch_size)
        self.grid_size = (self.img_size[0] // self.patch_size[0], self.img_size[1] // self.patch_size[1])
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=self.patch_size, stride=self.patch_size)

    def forward(self, x: torch.Tensor):
        """(B, 3, H, W) -> ((B, D, H/p, W/p) map, its grid)."""
        x = self.proj(x)
        return x, tuple(x.shape[-2:])
