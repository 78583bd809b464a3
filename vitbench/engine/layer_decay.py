"""Layer-wise learning-rate decay (BEiT / MAE fine-tuning) for any vitbench backbone, in any task.

mmseg's ``LayerDecayOptimizerConstructor`` matches parameter names of specific backbones; this one asks
the backbone itself: ``get_layer_id(name)`` (0 = embeddings, i + 1 = block i, num_layers + 1 = final norm)
and ``num_layers``. With decay rate d, a backbone parameter's learning rate is
``lr * d ** (num_layers + 1 - layer_id)``; everything outside the backbone (heads, necks, decoders) keeps
``lr``. Weight decay is 0 for 1-D parameters (norms, biases, LayerScale) and the backbone's
``no_weight_decay()`` names (position embedding, class/distillation tokens), as timm and MAE's fine-tuning code.
Two options state the other codes' rules:

- ``decay_embeddings=True``: the ``no_weight_decay()`` names are decayed like any >= 2-D parameter, as BEiT's
  and mmseg's ``LayerDecayOptimizerConstructor`` do (their name check compares ``'pos_embed'`` with the
  ``backbone.``-prefixed name, so it never exempts them);
- ``decay_biases=True``: 1-D parameters of layers that are not norms (the biases of linear and conv layers) are
  decayed, as detectron2's ``get_default_optimizer_params(weight_decay_norm=0.0)`` (ViTDet) and mmcv's default
  constructor without ``bias_decay_mult``; norms' weights and biases stay undecayed.

A timm model (``timm:NAME``) has no ``get_layer_id``: its layers are timm's own grouping, ``group_matcher``, as
``timm.optim.param_groups_layer_decay`` reads it (:func:`timm_layers`); a model without one is refused.

    optim_wrapper = dict(
        type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-4, weight_decay=0.05),
        constructor='vitbench.LayerDecayOptimWrapperConstructor',
        paramwise_cfg=dict(layer_decay_rate=0.65))         # optional: backbone='backbone' (attribute path),
                                                           # decay_embeddings, decay_biases (above)
"""
from typing import Callable, List, Tuple

import torch.nn as nn
from mmengine.optim import DefaultOptimWrapperConstructor

from vitbench.refusal import RefusalTypeError
from vitbench.registry import OPTIM_WRAPPER_CONSTRUCTORS

PARAMWISE = 'optim_wrapper.paramwise_cfg'  # where the constructor's options are, in a config

# the norms whose weight and bias are never decayed (public classes: BatchNorm's and InstanceNorm's private base
# would reach into torch's internals, tests/test_compat.py)
_NORMS = (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm,
          nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def timm_layers(model: nn.Module) -> Tuple[Callable[[str], int], int]:
    """(parameter name -> layer id, the top id) of a timm model from its ``group_matcher``: 0 for the stem, one id
    per block or stage, the top one for the final norm and head, as ``timm.optim.param_groups_layer_decay``. A name
    outside its groups is a KeyError, never a default group."""
    from timm.models import group_parameters
    if not hasattr(model, 'group_matcher'):
        raise RefusalTypeError(f'{type(model).__name__} defines no group_matcher(): timm cannot say its layers, so '
                               f'layer-wise decay cannot be applied (set {PARAMWISE}.layer_decay_rate=1.0)')
    ids = group_parameters(model, model.group_matcher(coarse=False), reverse=True)

    def layer_id(name: str) -> int:
        if name not in ids:
            raise KeyError(f'{name}: not in the layer groups of {type(model).__name__}.group_matcher()')
        return ids[name]
    return layer_id, max(ids.values())


def _layers_of(backbone: nn.Module, where: str) -> Tuple[Callable[[str], int], int]:
    """(name -> layer id, the top id) of a vitbench backbone or a timm model."""
    if hasattr(backbone, 'get_layer_id'):
        return backbone.get_layer_id, backbone.num_layers + 1
    if hasattr(backbone, 'group_matcher') or hasattr(backbone, 'pretrained_cfg'):
        return timm_layers(backbone)
    raise RefusalTypeError(f'{where} ({type(backbone).__name__}) has no get_layer_id() and no timm group_matcher(); '
                           f'layer decay needs a vitbench or timm backbone (set {PARAMWISE}.backbone to its '
                           f'attribute path, or {PARAMWISE}.layer_decay_rate=1.0)')


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class LayerDecayOptimWrapperConstructor(DefaultOptimWrapperConstructor):

    def add_params(self, params: List[dict], module: nn.Module, **kwargs) -> None:
        decay_rate = self.paramwise_cfg.get('layer_decay_rate', 1.0)
        path = self.paramwise_cfg.get('backbone', 'backbone')
        try:
            backbone = module.get_submodule(path) if path else module
        except AttributeError:
            raise RefusalTypeError(f'{PARAMWISE}.backbone={path!r}: {type(module).__name__} has no such submodule; '
                                   f"give the backbone's attribute path (default 'backbone'; '' for the whole "
                                   'model)') from None
        try:
            get_layer_id, top = _layers_of(backbone, f'{type(module).__name__}.{path}')
        except RefusalTypeError:
            if decay_rate != 1.0:
                raise
            get_layer_id, top = (lambda name: 0), 0  # no decay: every parameter at the base rate
        prefix = f'{path}.' if path else ''
        no_decay_names = set() if self.paramwise_cfg.get('decay_embeddings', False) else \
            set(getattr(backbone, 'no_weight_decay', set)())
        decay_biases = self.paramwise_cfg.get('decay_biases', False)
        in_norms = {id(p) for m in module.modules() if isinstance(m, _NORMS) for p in m.parameters(recurse=False)}

        groups = {}
        for name, param in module.named_parameters():
            if not param.requires_grad:
                continue
            in_backbone = name.startswith(prefix)
            local = name[len(prefix):] if in_backbone else name
            layer_id = get_layer_id(local) if in_backbone else top
            flat = param.ndim <= 1 and not (decay_biases and name.endswith('.bias') and id(param) not in in_norms)
            no_decay = flat or (in_backbone and local in no_decay_names)
            scale = decay_rate ** (top - layer_id)
            group = groups.setdefault((layer_id, no_decay), dict(
                params=[], param_names=[], lr=self.base_lr * scale, lr_scale=scale, layer_id=layer_id,
                weight_decay=0.0 if no_decay else self.base_wd))
            group['params'].append(param)
            group['param_names'].append(name)
        params.extend(groups[key] for key in sorted(groups))
