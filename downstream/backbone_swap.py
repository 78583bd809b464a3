"""Swap the backbone of any experiment in one option: ``tools/train.py CONFIG --backbone NAME
[--checkpoint PATH]``.

Every config keeps its backbone at ``model.backbone`` as ``type=<its family's type>, arch=<named variant>`` (the
one config dialect, backbones/backbone_type.py) and names it in ``experiment.backbone``. The swap rewrites the
three (the type: its family record's ``dense_type``, backbones/family.py: ViT, CaiT, ResMLP, PatchConvNet, or
``TimmBackbone`` for ``timm:NAME``), drops what the record says a swap to the family drops (dense options it does
not take, a checkpoint it cannot load), points ``init_cfg`` at the checkpoint, and then lets the task re-derive
what depends on the backbone (the maps it reads, the widths they have, ...) through its entry in
:data:`ADAPTERS`, given the record's layout of the variant (its constructor arguments completed with the model
class's defaults, or, for a timm model, what ``backbones.timm_backbones.describe`` says of its maps) and the
family's record. Classification tasks (pretrain, finetune, transfer) need none: their heads take their width from
the backbone they are built with.

The channels of the heads and neck are the protocol's head rule's (``experiment.protocol.heads``,
downstream/head_rule.py), for the config's own backbone as for a swapped one: :func:`apply_head_rule` sets them,
the swap included, and tools/train.py refuses a config or ``--cfg-options`` that contradicts the rule
(:func:`head_rule_mismatches`). A swap to the config's own backbone changes nothing.
"""
import os.path as osp
from typing import Callable, Dict, List, Optional

from mmengine.logging import print_log

from backbones.backbone_type import backbone_type
from backbones.factory import family_record
from backbones.layers.residual_scale import SCALES_FROM_CHECKPOINT

from . import head_rule
from .det.swap import HEAD_TARGETS as DET_HEADS, adapt_mask_rcnn
from .seg.swap import HEAD_TARGETS as SEG_HEADS, adapt_upernet

# experiment.task -> fn(cfg, name, layout, family record) updating what depends on the backbone
ADAPTERS: Dict[str, Callable] = {'seg': adapt_upernet, 'det': adapt_mask_rcnn}
# experiment.task -> the groups of widths its protocol's head rule sets, and their config keys
HEAD_TARGETS: Dict[str, Dict[str, tuple]] = {'seg': SEG_HEADS, 'det': DET_HEADS}


def backbone_layout(name: str, backbone: dict) -> dict:
    """What a task adapter needs of backbone ``name``: its family record's ``layout`` (a variant's constructor
    arguments completed with its model class's defaults, or, for timm, what its ``feature_info`` says of a model
    built as ``backbone`` asks: its img_size)."""
    return family_record(name).layout(name, backbone)


def head_widths(cfg) -> Dict[str, int]:
    """{dotted config key: channels} that the protocol's head rule (``experiment.protocol.heads``) gives the
    config's backbone (``model.backbone.arch``); {} for a config without a rule, or of a task without heads to
    size. Keys under a head the config does not build (``auxiliary_head=None``) are left out."""
    experiment = cfg.get('experiment') or {}
    heads = (experiment.get('protocol') or {}).get('heads')
    targets = HEAD_TARGETS.get(experiment.get('task'))
    backbone = (cfg.get('model') or {}).get('backbone') or {}
    if heads is None or targets is None or not backbone.get('arch'):
        return {}
    name = backbone.arch
    widths = head_rule.resolve(heads, targets, backbone_layout(name, backbone), family_record(name),
                               'experiment.protocol.heads')
    return {key: width for key, width in widths.items() if isinstance(_parent(cfg, key), dict)}


def apply_head_rule(cfg) -> None:
    """Set the widths :func:`head_widths` gives (a no-op on a config that agrees with its rule)."""
    for key, width in head_widths(cfg).items():
        _parent(cfg, key)[key.rsplit('.', 1)[1]] = width


def head_rule_mismatches(cfg, options: Optional[dict] = None) -> List[str]:
    """``key=value (the rule gives N)`` for each width of ``cfg`` that its protocol's head rule does not give its
    backbone; with ``options`` (``--cfg-options``), for each width they set."""
    found = []
    for key, width in head_widths(cfg).items():
        if options is None:
            value = _parent(cfg, key).get(key.rsplit('.', 1)[1])
        elif key in options:
            value = options[key]
        else:
            continue
        if value != width:
            found.append(f'{key}={value} (the rule gives {width})')
    return found


def _parent(cfg, dotted: str):
    node = cfg
    for part in dotted.split('.')[:-1]:
        node = node.get(part) if hasattr(node, 'get') else None
    return node


def swap_backbone(cfg, name: Optional[str] = None, checkpoint: Optional[str] = None,
                  keep_blocks: Optional[int] = None) -> None:
    """Rewrite ``cfg`` in place to use backbone variant ``name`` and/or weights from ``checkpoint``;
    ``keep_blocks``: load only the first k blocks of those weights (``backbones.checkpoint.load_checkpoint``). A
    backbone with ``residual_scale_from='checkpoint'`` takes only its residual scales from ``checkpoint``."""
    record = family_record(name) if name is not None else None  # unknown names list the valid ones
    if checkpoint is not None and not osp.isfile(checkpoint):
        raise FileNotFoundError(f"--checkpoint '{checkpoint}' not found")
    backbone = cfg.get('model', {}).get('backbone')
    if backbone is None:
        raise KeyError('the config has no model.backbone to swap')
    if name is not None:
        backbone.type = backbone_type(name, like=backbone.get('type'))  # the one dialect: type + arch
        backbone.arch = name
        task = cfg.get('experiment', {}).get('task')
        for key in record.swap_drops if task in ADAPTERS else ():  # options of the dense ViT it does not take
            backbone.pop(key, None)
        init_cfg = backbone.get('init_cfg')
        if record.swap_drops_checkpoint and isinstance(init_cfg, dict) and init_cfg.get('checkpoint') \
                and checkpoint is None:
            # the config's weights are its own backbone's, which a model of this family cannot load
            print_log(f'{name}: not loading the config\'s checkpoint {init_cfg.checkpoint} (weights of another '
                      'backbone); pass --checkpoint FILE, or its own pretrained weights (timm: --cfg-options '
                      'model.backbone.pretrained=True, from the local Hugging Face cache)', logger='current')
            backbone.init_cfg = None
        cfg.setdefault('experiment', {})['backbone'] = name
        if task in ADAPTERS:
            ADAPTERS[task](cfg, name, backbone_layout(name, backbone), record)
        apply_head_rule(cfg)  # the widths of the protocol's rule, as for the config's own backbone
    if checkpoint is not None and backbone.get('residual_scale_from') == SCALES_FROM_CHECKPOINT:
        # only the checkpoint's residual scales: a training from scratch with another run's scales (CaiT §4.1,
        # thesis §3.5.3), its own pre-training; the options it records name 'checkpoint', not this machine's path
        backbone.residual_scale_from = checkpoint
        cfg.setdefault('experiment', {})['checkpoint'] = checkpoint  # provenance, and the cost behind the scales
    elif checkpoint is not None:
        backbone.init_cfg = dict(type='Pretrained', checkpoint=checkpoint)
        experiment = cfg.setdefault('experiment', {})
        experiment['pretrain'] = None  # now read from the checkpoint's own metadata
        experiment['checkpoint'] = checkpoint
    if keep_blocks is not None:
        init_cfg = backbone.get('init_cfg')
        if not (isinstance(init_cfg, dict) and init_cfg.get('type') == 'Pretrained'):
            raise ValueError(f'--keep-blocks {keep_blocks}: keeps the first blocks of pre-trained weights, and '
                             'the backbone starts from none: pass --checkpoint PATH')
        depth = backbone_layout(backbone.arch, backbone).get('depth') if backbone.get('arch') else None
        if keep_blocks < 0 or (depth is not None and keep_blocks > depth):
            raise ValueError(f'--keep-blocks {keep_blocks}: expected a number of blocks from 0 to {depth} '
                             f'({backbone.arch} has {depth})')
        init_cfg['keep_blocks'] = keep_blocks
