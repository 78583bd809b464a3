"""``tools/train.py <maskrcnn config> --backbone NAME``: the ViTDet layout follows the new backbone.

What depends on the backbone: the pyramid's input width (its ``embed_dim``), the pyramid scales (strides 4
to 32 whatever the patch size), and which blocks keep global attention: four, evenly spaced, the last one
included (ViTDet: 2, 5, 8, 11 at depth 12; 5, 11, 17, 23 at depth 24; 7, 15, 23, 31 at depth 32). Every
family gives the pyramid its last map (PatchConvNet's trunk output, as the thesis' Table 5.6 does); only the
ViT has windowed attention and relative position biases (both kept: the tables follow the new patch size and
window), the others drop those keys (CaiT attends globally, memory growing with the image; ResMLP and
PatchConvNet have no attention), and ResMLP's fixed token grid is built for the padded batch: the family
record's ``windowed`` and ``fixed_grid`` (backbones/family.py). ``with_cp``
(activation checkpointing) is kept: every dense backbone has it. The widths of the pyramid's output and of the
heads are the protocol's head rule's (downstream/head_rule.py: the groups :data:`HEAD_TARGETS`), for every backbone.
"""
from typing import List, Tuple

from backbones.family import Family

# the protocol's head rule (experiment.protocol.heads): the pyramid's output width, which every head reads, and
# the box head's fully connected width
HEAD_TARGETS = {
    'pyramid': ('model.neck.out_channels', 'model.rpn_head.in_channels', 'model.rpn_head.feat_channels',
                'model.roi_head.bbox_roi_extractor.out_channels', 'model.roi_head.bbox_head.in_channels',
                'model.roi_head.bbox_head.conv_out_channels', 'model.roi_head.mask_roi_extractor.out_channels',
                'model.roi_head.mask_head.in_channels', 'model.roi_head.mask_head.conv_out_channels'),
    'box_fc': ('model.roi_head.bbox_head.fc_out_channels',),
}
STRIDES = (4, 8, 16, 32)  # of the pyramid levels the RPN anchors and RoI extractors are set for


def global_blocks(depth: int, num: int = 4) -> List[int]:
    """``num`` blocks evenly spaced over ``depth``, ending with the last one."""
    num = min(num, depth)
    return [(i + 1) * depth // num - 1 for i in range(num)]


def pyramid_scales(patch_size: int) -> Tuple[float, ...]:
    """Rescale factors that turn the stride-``patch_size`` map into the pyramid's strides 4, 8, 16, 32."""
    scales = tuple(patch_size / s for s in STRIDES)
    if patch_size not in (8, 16):
        raise ValueError(f'patch size {patch_size}: the simple feature pyramid reaches strides {STRIDES} only '
                         f'from patch 8 or 16 (scales {tuple(8 / s for s in STRIDES)} or '
                         f'{tuple(16 / s for s in STRIDES)}); this would need scales {scales}')
    return scales


def adapt_mask_rcnn(cfg, name: str, layout: dict, family: Family) -> None:
    backbone, neck = cfg.model.backbone, cfg.model.neck
    if layout.get('kind') == 'hierarchical':
        return _adapt_hierarchical(cfg, name, layout)
    patch = layout['patch_size']
    scales = pyramid_scales(patch)
    pad = (cfg.model.get('data_preprocessor') or {}).get('pad_size_divisor') or 0
    if pad % patch:
        raise ValueError(f'{name} has {patch}x{patch} patches, which do not tile the {pad}x{pad} batches of this '
                         f'config (model.data_preprocessor.pad_size_divisor): use a multiple of {patch}')
    depth = backbone.get('depth') or layout['depth']  # an explicit depth override (tests, ablations) wins
    backbone.out_indices = [depth - 1]                 # the pyramid is built from the last map only
    if family.windowed:  # its record (backbones/family.py)
        backbone.global_attn_indexes = global_blocks(depth)
    else:
        for key in ('window_size', 'global_attn_indexes', 'use_rel_pos'):
            backbone.pop(key, None)
    if family.fixed_grid and pad:
        backbone.img_size = pad  # every batch is padded to this square
    neck.in_channels = layout['embed_dim']
    neck.scales = list(scales)


def _adapt_hierarchical(cfg, name: str, layout: dict) -> None:
    """A timm model's stages at strides 4-32 into mmdet's FPN (module docstring)."""
    model = cfg.model
    pad = (model.get('data_preprocessor') or {}).get('pad_size_divisor') or 0
    if pad % max(layout['strides']):
        raise ValueError(f'{name} reaches stride {max(layout["strides"])}, which does not tile the {pad}x{pad} batches of '
                         f'this config (model.data_preprocessor.pad_size_divisor): use a multiple of it')
    model.backbone.out_indices = layout['indices']
    model.neck = dict(type='FPN', in_channels=list(layout['channels']), out_channels=model.neck.out_channels,
                      num_outs=len(layout['strides']) + 1)  # + the max-pooled stride-64 level the RPN anchors expect
