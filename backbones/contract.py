"""The contract of a backbone family's model class: what the rest of the suite reads of it, stated once.

A family's model (``Family.model_class``, backbones/family.py) provides

* **stated by the class** (a class attribute or property; ``register_family`` refuses a class without them):
  ``num_prefix_tokens`` (tokens ahead of the patches in the walk's tokens: class, distillation; 0 for none; the
  dense maps and the analyses strip them), ``block_attention`` (its blocks return attention maps when called
  with ``return_attn``: ``forward_attention`` and the analyses' attention statistics), ``supports_keep`` (its
  blocks run on a subset of the patches: MAE's visible tokens), ``num_layers`` with ``get_layer_id`` (layer-wise
  decay), ``forward`` / ``forward_features`` / ``forward_head(x, pre_logits)``, and the block walk
  (``iter_hidden``, from :class:`~backbones.block_walk.BlockWalkMixin` over the model's ``blocks``, final
  ``norm`` and ``_trunk_input``);
* **constructor arguments** (:data:`LAYOUT` and :data:`OVERRIDES`): its layout, which the task adapters read of a
  variant (``Family.layout``: the variant's arguments completed with the constructor's defaults), and the
  overrides the recipes and the dense wrappers pass;
* **set by the constructor** (checked on every variant by tests/test_backbone_contract.py): ``embed_dim``,
  ``num_features``, ``depth`` (= ``len(blocks)``), ``patch_size`` (the side of its square patches, the stride of
  its maps), ``num_classes``, ``global_pool``, ``blocks``, ``norm``.

What a pre-training needs of it is a set of :data:`CAPABILITIES`, which the model has or lacks
(:func:`capabilities_of`); a recipe names the ones it needs (``pretrain/mae.py`` ``MAE.needs``,
``pretrain/mocov3.py`` ``MoCoV3.needs``) and refuses a backbone without one, naming it (:func:`missing`).
:class:`FamilyModel` is the base that states the defaults (``ViTFamilyMixin`` of backbones/vit.py derives from
it and fills in the rest); a family need not derive from it, only provide what it lists.
"""
import inspect
from math import prod
from typing import Dict, FrozenSet, List, Optional, Sequence

from torch import nn

from .block_walk import BlockWalkMixin

# what the task adapters read of a variant (downstream/seg/swap.py, downstream/det/swap.py, --keep-blocks)
LAYOUT = ('embed_dim', 'patch_size', 'depth')
# what the suite passes to every family: the dense wrappers (backbones/dense.py), the classifier recipes, the
# configs' drop path, mmengine's init_cfg
OVERRIDES = ('img_size', 'num_classes', 'global_pool', 'final_norm', 'drop_path_rate', 'init_cfg')
METHODS = ('forward', 'forward_features', 'forward_head', 'get_layer_id', 'iter_hidden', '_trunk_input')
STATED = ('num_prefix_tokens', 'block_attention', 'supports_keep', 'num_layers')

CAPABILITIES: Dict[str, str] = {
    'class_token': 'a class token ahead of the patches through every block: num_prefix_tokens == 1 and a cls_token',
    'keep': 'blocks that run on a subset of the patches: supports_keep, global attention without windows or '
            'relative positions',
    'pos_embed_table': 'a learned position-embedding table over the patch grid: pos_embed of pos_embed_prefix + '
                       'grid rows',
    'attention': 'blocks that return their attention maps: block_attention, blk(x, grid=grid, return_attn=kind)',
    'token_mask': "patch tokens replaced by a mask token after the stem: _trunk_input(x, masked=..., mask_token=...)"
                  " (BEiT's masked image modelling)",
}


def capabilities_of(model: nn.Module) -> FrozenSet[str]:
    """The :data:`CAPABILITIES` ``model`` has; a module outside the contract (a timm model) has none."""
    if not isinstance(model, BlockWalkMixin):
        return frozenset()
    pos_embed, prefix = getattr(model, 'pos_embed', None), getattr(model, 'pos_embed_prefix', None)
    grid, dim = getattr(model, 'grid_size', None), getattr(model, 'embed_dim', None)
    has = {
        'class_token': model.num_prefix_tokens == 1 and getattr(model, 'cls_token', None) is not None,
        'keep': bool(model.supports_keep),
        'pos_embed_table': isinstance(pos_embed, nn.Parameter) and isinstance(prefix, int) and grid is not None
        and tuple(pos_embed.shape) == (1, prefix + prod(grid), dim),
        'attention': bool(model.block_attention),
        'token_mask': 'masked' in inspect.signature(model._trunk_input).parameters,
    }
    return frozenset(name for name, present in has.items() if present)


def missing(model: nn.Module, needs: Sequence[str]) -> Optional[str]:
    """The first of ``needs`` that ``model`` lacks, as ``"the capability 'name' (what it is), which Model
    lacks"``, the end of a refusal; None when it has them all."""
    have = capabilities_of(model)
    lacking = [name for name in needs if name not in have]
    if not lacking:
        return None
    return f'the capability {lacking[0]!r} ({CAPABILITIES[lacking[0]]}), which {type(model).__name__} lacks'


def constructor_defaults(cls: type) -> Dict[str, object]:
    """The constructor's arguments that have defaults, with them."""
    return {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


def layout_of(cls: type, kwargs: dict) -> dict:
    """A variant's layout: its constructor arguments ``kwargs`` completed with ``cls``'s defaults."""
    return dict(constructor_defaults(cls), **kwargs)


def contract_gaps(cls: type) -> List[str]:
    """What model class ``cls`` lacks of the contract (empty: nothing), each as a short phrase."""
    gaps = [f'{name}()' for name in METHODS if not callable(getattr(cls, name, None))
            or getattr(cls, name) is getattr(nn.Module, name, None)]
    gaps += [name for name in STATED if not hasattr(cls, name)]
    arguments = set(inspect.signature(cls.__init__).parameters)
    absent = [name for name in LAYOUT + OVERRIDES if name not in arguments]
    return gaps + ([f"the constructor argument(s) {', '.join(absent)}"] if absent else [])


def layout_gaps(cls: type, kwargs: dict) -> List[str]:
    """What a variant of ``cls`` with constructor arguments ``kwargs`` lacks: unknown arguments, and a layout
    value that is not an int."""
    arguments = set(inspect.signature(cls.__init__).parameters) - {'self'}
    layout = layout_of(cls, kwargs)
    gaps = [f'unknown argument {name}' for name in sorted(set(kwargs) - arguments)]
    return gaps + [f'{name} (got {layout.get(name)!r}, expected an int)' for name in LAYOUT
                   if type(layout.get(name)) is not int]


class FamilyModel(BlockWalkMixin):
    """The base of a family's model class (module docstring): the block walk, and the contract's defaults: no
    attention maps (``block_attention``), no subset of the patches (``supports_keep``); ``num_prefix_tokens`` has
    none (a model with a class token that forgot it would give maps with the token in them): every family states
    it."""
    num_prefix_tokens: int

    @property
    def capabilities(self) -> FrozenSet[str]:
        return capabilities_of(self)
