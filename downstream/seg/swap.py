"""``tools/train.py <upernet config> --backbone NAME``: neck and head widths follow the new backbone.

UperNet on a plain backbone (BEiT / MAE / XCiT practice) reads four maps, rescales them 4 / 2 / 1 / 0.5 with
``Feature2Pyramid`` (width = embedding dim) and decodes with the channels its protocol's head rule gives the
backbone (downstream/head_rule.py: the groups :data:`HEAD_TARGETS`; the swap sets them as for the config's own
backbone). What differs by family is in its record (backbones/family.py: ``upernet_levels``, ``upernet_width``,
``fixed_grid``), each rule named there is a function here (:data:`LEVELS`, :data:`WIDTHS`):

- which blocks feed the four levels: four spread over the depth (``pyramid_indices``) for the token models
  (ViT, CaiT, ResMLP, thesis Table 4.6); the trunk's last map at every level for PatchConvNet, "we only use
  the final output of our network at different levels in UPerNet" (thesis §5.3.3);
- the decoder width under a protocol whose rule is ``'by_width'``: 512 for base and larger, 384 for small, 192 for
  tiny (DeiT III thesis, §6.3.5.2); 512 for PatchConvNet from S up (Table 5.3's parameter counts are those of
  512-channel UperNets);
- a fixed token grid (ResMLP: its cross-patch layers are sized for one grid, so the backbone is built for
  the config's crops).

A neck that narrows the maps (``scale_factor``: MAE-lite's Semantic FPN, ``vitbench.ScaledFeature2Pyramid``)
hands the heads ``int(embed_dim * scale_factor)`` channels (:func:`neck_width`); the same adapter serves that
protocol's FPN head.

A timm model (``timm:NAME``) is laid out by what its ``feature_info`` says: a plain one (one stride, timm's ViTs)
as the suite's ViT; a hierarchical one (ConvNeXt, Swin, ResNet ...) hands its maps at strides 4, 8, 16, 32
straight to UperNet, without the rescaling neck, as those models' own UperNet configs do (a rule of the
backbone's width reads its last map's).
"""
from typing import List

from backbones.family import Family

from .neck import scaled_width


def head_channels(embed_dim: int) -> int:
    """UperNet channels for a backbone of width ``embed_dim``."""
    if embed_dim >= 768:
        return 512
    return 384 if embed_dim >= 384 else 192


def pyramid_indices(depth: int) -> List[int]:
    """The blocks feeding the 4 pyramid levels: [3, 5, 7, 11] at depth 12, [7, 11, 15, 23] at depth 24."""
    if depth < 6:
        raise ValueError(f'UperNet reads 4 distinct blocks; a backbone of depth {depth} has too few (>= 6)')
    return [depth // 3 - 1, depth // 2 - 1, 2 * depth // 3 - 1, depth - 1]


def trunk_output(depth: int) -> List[int]:
    """The last block's map at all 4 levels (PatchConvNet)."""
    return [depth - 1] * 4


def patchconvnet_channels(embed_dim: int) -> int:
    """512 for S (384), B and L; narrower (demo-sized) models as the ViTs of their width."""
    return 512 if embed_dim >= 384 else head_channels(embed_dim)


# the protocol's head rule (experiment.protocol.heads, downstream/head_rule.py): its groups and the keys each sets
HEAD_TARGETS = {'decode_head': ('model.decode_head.channels',), 'auxiliary_head': ('model.auxiliary_head.channels',)}

# a record's upernet_levels / upernet_width (backbones.family.UPERNET_LEVELS / UPERNET_WIDTHS) -> its rule
LEVELS = {'pyramid': pyramid_indices, 'trunk_output': trunk_output}
WIDTHS = {'by_width': head_channels, '512_from_small': patchconvnet_channels}


def adapt_upernet(cfg, name: str, layout: dict, family: Family) -> None:
    if layout.get('kind') == 'hierarchical':
        return _adapt_hierarchical(cfg, layout)
    dim, model = layout['embed_dim'], cfg.model
    if model.backbone.get('rel_pos_bias') and 'rel_pos_bias' not in _arguments(family.model_class):
        raise ValueError(f"{name}: this protocol turns on BEiT's relative position bias in every block "
                         f"(model.backbone.rel_pos_bias), which the {family.title} family has no form of; run "
                         'it under another protocol (e.g. upernet_xcit160k)')
    levels = LEVELS[family.upernet_levels]
    preprocessor, patch = model.get('data_preprocessor') or {}, layout['patch_size']
    crop = preprocessor.get('size') or ()
    if any(side % patch for side in crop):
        raise ValueError(f'{name} has {patch}x{patch} patches, which do not tile the {crop} crops of this '
                         f'config (model.data_preprocessor.size): use crops that are a multiple of {patch}')
    if preprocessor.get('test_cfg', {}).get('size_divisor'):
        preprocessor.test_cfg.size_divisor = patch  # test images padded to whole patches
    if family.fixed_grid and crop:
        model.backbone.img_size = tuple(crop)  # a grid of the crops' size (smaller test windows are padded)
    model.backbone.out_indices = levels(layout['depth'])
    if model.get('neck') and 'embed_dim' in model.neck:
        model.neck.embed_dim = dim
    width = neck_width(model.get('neck'), dim)
    head = model.decode_head
    head.in_channels = [width] * len(head.in_channels) if isinstance(head.in_channels, (list, tuple)) else width
    aux = model.get('auxiliary_head') or []
    for aux_head in aux if isinstance(aux, list) else [aux]:
        aux_head.in_channels = width


def _arguments(model_class) -> set:
    import inspect
    return set(inspect.signature(model_class.__init__).parameters) if model_class is not None else set()


def neck_width(neck, embed_dim: int) -> int:
    """The width of the maps the rescaling neck hands the heads: the backbone's, or a narrowed neck's
    (``scale_factor``: MAE-lite's Semantic FPN, downstream/seg/neck.py)."""
    factor = (neck or {}).get('scale_factor')
    return embed_dim if factor is None else scaled_width(embed_dim, factor)


def _adapt_hierarchical(cfg, layout: dict) -> None:
    """A timm model's stages at strides 4-32 into UperNet directly (module docstring)."""
    model, chans = cfg.model, layout['channels']
    model.backbone.out_indices = layout['indices']
    model.neck = None  # the maps are already a pyramid
    preprocessor = model.get('data_preprocessor') or {}
    if preprocessor.get('test_cfg', {}).get('size_divisor'):
        preprocessor.test_cfg.size_divisor = max(layout['strides'])
    head = model.decode_head
    head.in_channels, head.in_index = list(chans), list(range(len(chans)))
    aux = model.get('auxiliary_head') or []
    for aux_head in aux if isinstance(aux, list) else [aux]:
        aux_head.in_channels = chans[aux_head.get('in_index', -1)]
