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


class DenseBackboneMixin:
    """``__init__`` and ``forward`` of a dense backbone over a classifier class (the next base in the MRO).

    A subclass names its ``family`` (the variant table's 'vit' / 'cait'), the classifier's ``default_depth``
    and the constructor arguments that drop its classifier-only parts (``dense_overrides``).
    """
    family: str
    default_depth: int
    dense_overrides: dict

    def __init__(self, arch: Optional[str] = None, img_size=None, out_indices: Union[int, Sequence[int]] = -1,
                 final_norm: bool = True, init_cfg=None, **kwargs):
        kwargs = _resolve(arch, self.family, dict(kwargs, img_size=img_size))
        depth = kwargs.get('depth', self.default_depth)
        indices = normalize_indices(out_indices, depth)
        # the final norm only exists when it is used (unused parameters break DistributedDataParallel)
        use_norm = final_norm and indices[-1] == depth - 1
        super().__init__(**dict(kwargs, num_classes=0, global_pool='', final_norm=use_norm, init_cfg=init_cfg,
                                **self.dense_overrides))
        self.arch = arch
        self.out_indices = indices
        self.final_norm = use_norm

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        return tuple(self.forward_intermediates(x, self.out_indices, norm=self.final_norm))


@MODELS.register_module(name='VisionTransformer')
class ViTBackbone(DenseBackboneMixin, VisionTransformer):
    """Dense ViT backbone (see the module docstring); ``window_size`` / ``global_attn_indexes`` give
    ViTDet-style windowed attention."""
    family, default_depth = 'vit', 12
    dense_overrides = dict(fc_norm=False)


@MODELS.register_module(name='CaiT')
class CaiTBackbone(DenseBackboneMixin, CaiT):
    """Dense CaiT backbone: the maps come from the patch tokens of the self-attention trunk."""
    family, default_depth = 'cait', 24
    dense_overrides = dict(depth_token_only=0)
