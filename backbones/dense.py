"""The backbones as registered OpenMMLab backbones for dense tasks (mmseg, mmdet).

``type='vitbench.VisionTransformer'`` / ``'vitbench.CaiT'`` / ``'vitbench.ResMLP'`` / ``'vitbench.PatchConvNet'``
with ``arch=<named variant>`` (or explicit dimensions), ``img_size`` (default: the variant's; for the ViTs
the size of the position-embedding table, any input divisible by the patch size works), ``out_indices`` and
``final_norm``. ``forward`` returns a tuple of (B, C, H/p, W/p) maps, one per out index, in the order given
(an index may repeat: PatchConvNet feeds its last map to every pyramid level, as the thesis does), read
through timm's ``forward_intermediates`` (``backbones/block_walk.py``), the API ``TimmBackbone`` reads too.
``with_cp=True`` (mmseg / mmdet's name) runs every block under activation checkpointing in training: the same
outputs and gradients for about one more forward pass of compute, and far less activation memory (blocks
with BatchNorm, as PatchConvNet's norm='bn', then update their running statistics twice per step, as mmcv's).
``init_cfg=dict(type='Pretrained', checkpoint=...)`` loads through ``backbones.load_checkpoint``; the classifier
head (and CaiT's / PatchConvNet's class-attention pooling) is not built, its checkpoint keys are dropped with
a note.
"""
from typing import Optional, Sequence, Tuple, Union

import torch
import torch.nn.functional as F

from vitbench.registry import MODELS

from .backbone_type import SCOPE, check_backbone_type
from .block_walk import normalize_indices, tokens_to_map
from .cait import CaiT
from .factory import variant_kwargs
from .family import get_family
from .patchconvnet import PatchConvNet
from .resmlp import ResMLP
from .vit import VisionTransformer


def _resolve(arch: Optional[str], family: str, kwargs: dict) -> dict:
    """Constructor arguments: the variant's (when ``arch`` is given) updated with the explicit ones."""
    kwargs = {k: v for k, v in kwargs.items() if k != 'img_size' or v is not None}
    if arch is None:
        return kwargs
    check_backbone_type(SCOPE + get_family(family).dense_type, arch)
    return variant_kwargs(arch, **kwargs)


class DenseBackboneMixin:
    """``__init__`` and ``forward`` of a dense backbone over a classifier class (the next base in the MRO).

    A subclass names its ``family`` (its record's name in backbones/family.py: 'vit' / 'cait' / ...), the
    classifier's ``default_depth`` and the constructor arguments that drop its classifier-only parts
    (``dense_overrides``); it is registered under its record's ``dense_type``.
    """
    family: str
    default_depth: int
    dense_overrides: dict

    def __init__(self, arch: Optional[str] = None, img_size=None, out_indices: Union[int, Sequence[int]] = -1,
                 final_norm: bool = True, with_cp: bool = False, init_cfg=None, **kwargs):
        kwargs = _resolve(arch, self.family, dict(kwargs, img_size=img_size))
        depth = kwargs.get('depth', self.default_depth)
        indices = normalize_indices(out_indices, depth)  # checked, sorted, each once: the blocks to run
        # the final norm only exists when it is used (unused parameters break DistributedDataParallel)
        use_norm = final_norm and indices[-1] == depth - 1
        super().__init__(**dict(kwargs, num_classes=0, global_pool='', final_norm=use_norm, init_cfg=init_cfg,
                                **self.dense_overrides))
        self.arch = arch
        order = [out_indices] if isinstance(out_indices, int) else list(out_indices)
        self.out_indices = [i % depth for i in order]  # as given: the maps come out in this order
        self.final_norm = use_norm
        self.with_cp = with_cp  # read by run_block

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        blocks = sorted(set(self.out_indices))
        final, maps = self.forward_intermediates(x, blocks, stop_early=True)
        # the final norm on the last block's map only (timm's intermediates would normalise every one): the
        # final features are that block's tokens through it
        if self.final_norm:
            maps[-1] = tokens_to_map(final, self.num_prefix_tokens, maps[-1].shape[-2:])
        by_block = dict(zip(blocks, maps))
        return tuple(by_block[i] for i in self.out_indices)


@MODELS.register_module(name='VisionTransformer')
class ViTBackbone(DenseBackboneMixin, VisionTransformer):
    """Dense ViT backbone (see the module docstring); ``window_size`` / ``global_attn_indexes`` give
    ViTDet-style windowed attention, ``use_rel_pos=True`` its relative position biases."""
    family, default_depth = 'vit', 12
    dense_overrides = dict(fc_norm=False)


@MODELS.register_module(name='CaiT')
class CaiTBackbone(DenseBackboneMixin, CaiT):
    """Dense CaiT backbone: the maps come from the patch tokens of the self-attention trunk."""
    family, default_depth = 'cait', 24
    dense_overrides = dict(depth_token_only=0)


@MODELS.register_module(name='ResMLP')
class ResMLPBackbone(DenseBackboneMixin, ResMLP):
    """Dense ResMLP backbone: the patch tokens after the ``out_indices`` blocks (thesis §4.3.6, Table 4.6).

    The cross-patch layers fix the grid to ``img_size`` / patch: smaller inputs (slide-window crops at an
    image border, batches padded less than the crop) are zero-padded at the bottom and right to
    ``img_size`` and the maps cropped back, as the data preprocessor pads training crops; larger ones are
    refused (use slide inference with ``crop_size`` = ``img_size``).
    """
    family, default_depth = 'resmlp', 12
    dense_overrides = {}

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        (H, W), (ph, pw) = self.patch_embed.img_size, self.patch_embed.patch_size
        h, w = x.shape[-2:]
        if h > H or w > W:
            raise ValueError(f'ResMLP backbone built for {H}x{W} inputs got {h}x{w}: its cross-patch layers fix '
                             f'the grid (set img_size, and test with mode=slide, crop_size={H, W})')
        if (h, w) == (H, W):
            return super().forward(x)
        maps = super().forward(F.pad(x, (0, W - w, 0, H - h)))
        grid = (-(-h // ph), -(-w // pw))  # the patches that hold image pixels
        return tuple(m[..., :grid[0], :grid[1]] for m in maps)


@MODELS.register_module(name='PatchConvNet')
class PatchConvNetBackbone(DenseBackboneMixin, PatchConvNet):
    """Dense PatchConvNet backbone: the trunk's maps, without the attention-based pooling. The thesis feeds
    the trunk's last map to every level of UperNet and Mask R-CNN (§5.3.3): ``out_indices=[N - 1] * 4``
    with a rescaling neck (4 / 2 / 1 / 0.5), or ``[N - 1]`` with a simple feature pyramid."""
    family, default_depth = 'patchconvnet', 60
    dense_overrides = dict(depth_token_only=0)
