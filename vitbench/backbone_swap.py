"""Swap the backbone of any experiment in one option: ``tools/train.py CONFIG --backbone NAME
[--checkpoint PATH]``.

Every config keeps its backbone at ``model.backbone`` with ``arch=<named variant>`` and names it in
``experiment.backbone``. The swap rewrites both (and the registered type when the family changes, ViT ↔
CaiT), points ``init_cfg`` at the checkpoint, and then lets the task re-derive what depends on the backbone
(neck and head widths, ...): a task registers such an adapter with :func:`register_adapter`.
"""
from typing import Callable, Dict, Optional

_ADAPTERS: Dict[str, Callable] = {}
_FAMILY_TYPES = {'vit': 'VisionTransformer', 'cait': 'CaiT'}


def register_adapter(task: str):
    """Decorator: ``fn(cfg, name, variant_kwargs)`` updates the parts of a ``task`` config that depend on
    the backbone (e.g. head widths from ``variant_kwargs['embed_dim']``)."""
    def wrap(fn):
        _ADAPTERS[task] = fn
        return fn
    return wrap


def swap_backbone(cfg, name: Optional[str] = None, checkpoint: Optional[str] = None) -> None:
    """Rewrite ``cfg`` in place to use backbone variant ``name`` and/or weights from ``checkpoint``."""
    import os.path as osp

    import downstream  # noqa: F401  (tasks register their adapters on import)
    import pretrain  # noqa: F401
    from backbones.factory import get_variant, variant_kwargs

    family = get_variant(name)['model'] if name is not None else None  # unknown names list the valid ones
    if checkpoint is not None and not osp.isfile(checkpoint):
        raise FileNotFoundError(f"--checkpoint '{checkpoint}' not found")
    backbone = cfg.get('model', {}).get('backbone')
    if backbone is None:
        raise KeyError('the config has no model.backbone to swap')
    if name is not None:
        if 'type' in backbone:
            scope = 'vitbench.' if backbone.type.startswith('vitbench.') else ''
            backbone.type = scope + _FAMILY_TYPES[family]
        backbone.arch = name
        cfg.setdefault('experiment', {})['backbone'] = name
        task = cfg.experiment.get('task')
        if task in _ADAPTERS:
            _ADAPTERS[task](cfg, name, variant_kwargs(name))
    if checkpoint is not None:
        backbone.init_cfg = dict(type='Pretrained', checkpoint=checkpoint)
        experiment = cfg.setdefault('experiment', {})
        experiment['pretrain'] = None  # now read from the checkpoint's own metadata
        experiment['checkpoint'] = checkpoint
