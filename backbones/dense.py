"""The ViT family and CaiT as registered OpenMMLab backbones for dense tasks (mmseg, mmdet).

``type='vitbench.VisionTransformer'`` / ``'vitbench.CaiT'`` with ``arch=<named variant>`` (or explicit
dimensions), ``img_size`` (size of the position-embedding table, default: the variant's; any input divisible
by the patch size works), ``out_indices`` and ``final_norm``. ``forward`` returns a tuple of (B, C, H/p, W/p)
maps, one per out index. ``init_cfg=dict(type='Pretrained', checkpoint=...)`` loads through
``backbones.load_checkpoint``; the classifier head (and CaiT's class-attention stage) is not built, its
checkpoint keys are dropped with a note.
"""
from typing import Optional, Sequence, Tuple, Union

import torch

from vitbench.registry import MODELS

from .cait import CaiT
from .factory import variant_kwargs
from .vit import VisionTransformer, normalize_indices


def _resolve(arch: Optional[str], family: str, kwargs: dict) -> dict:
    """Constructor arguments: the variant's (when ``arch`` is given) updated with the explicit ones."""
    kwargs = {k: v for k, v in kwargs.items() if k != 'img_size' or v is not None}
    if arch is None:
        return kwargs
    from .factory import get_variant
    if get_variant(arch)['model'] != family:
        raise ValueError(f"arch {arch!r} is not a {'ViT' if family == 'vit' else 'CaiT'} variant")
    return variant_kwargs(arch, **kwargs)


@MODELS.register_module(name='VisionTransformer')
class ViTBackbone(VisionTransformer):
    """Dense ViT backbone (see the module docstring); ``window_size`` / ``global_attn_indexes`` give
    ViTDet-style windowed attention."""

    def __init__(self, arch: Optional[str] = None, img_size=None, out_indices: Union[int, Sequence[int]] = -1,
                 final_norm: bool = True, init_cfg=None, **kwargs):
        kwargs = _resolve(arch, 'vit', dict(kwargs, img_size=img_size))
        depth = kwargs.get('depth', 12)
        self_indices = normalize_indices(out_indices, depth)
        # the final norm only exists when it is used (unused parameters break DistributedDataParallel)
        use_norm = final_norm and self_indices[-1] == depth - 1
        super().__init__(**dict(kwargs, num_classes=0, global_pool='', fc_norm=False, final_norm=use_norm,
                                init_cfg=init_cfg))
        self.arch = arch
        self.out_indices = self_indices
        self.final_norm = use_norm

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        return tuple(self.forward_intermediates(x, self.out_indices, norm=self.final_norm))


@MODELS.register_module(name='CaiT')
class CaiTBackbone(CaiT):
    """Dense CaiT backbone: the maps come from the patch tokens of the self-attention trunk."""

    def __init__(self, arch: Optional[str] = None, img_size=None, out_indices: Union[int, Sequence[int]] = -1,
                 final_norm: bool = True, init_cfg=None, **kwargs):
        kwargs = _resolve(arch, 'cait', dict(kwargs, img_size=img_size))
        depth = kwargs.get('depth', 24)
        self_indices = normalize_indices(out_indices, depth)
        use_norm = final_norm and self_indices[-1] == depth - 1
        super().__init__(**dict(kwargs, num_classes=0, global_pool='', depth_token_only=0,
                                final_norm=use_norm, init_cfg=init_cfg))
        self.arch = arch
        self.out_indices = self_indices
        self.final_norm = use_norm

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        return tuple(self.forward_intermediates(x, self.out_indices, norm=self.final_norm))
