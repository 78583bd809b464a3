"""Layer-wise learning-rate decay (BEiT / MAE fine-tuning) for any vitbench backbone, in any task.

mmseg's ``LayerDecayOptimizerConstructor`` matches parameter names of specific backbones; this one asks
the backbone itself: ``get_layer_id(name)`` (0 = embeddings, i + 1 = block i, num_layers + 1 = final norm)
and ``num_layers``. With decay rate d, a backbone parameter's learning rate is
``lr * d ** (num_layers + 1 - layer_id)``; everything outside the backbone (heads, necks, decoders) keeps
``lr``. Weight decay is 0 for 1-D parameters (norms, biases, LayerScale) and the backbone's
``no_weight_decay()`` names (position embedding, class/distillation tokens).

    optim_wrapper = dict(
        type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-4, weight_decay=0.05),
        constructor='vitbench.LayerDecayOptimWrapperConstructor',
        paramwise_cfg=dict(layer_decay_rate=0.65))         # optional: backbone='backbone' (attribute path)
"""
from typing import List

import torch.nn as nn
from mmengine.optim import DefaultOptimWrapperConstructor

from vitbench.registry import OPTIM_WRAPPER_CONSTRUCTORS


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class LayerDecayOptimWrapperConstructor(DefaultOptimWrapperConstructor):

    def add_params(self, params: List[dict], module: nn.Module, **kwargs) -> None:
        decay_rate = self.paramwise_cfg.get('layer_decay_rate', 1.0)
        path = self.paramwise_cfg.get('backbone', 'backbone')
        backbone = module.get_submodule(path) if path else module
        if not hasattr(backbone, 'get_layer_id'):
            raise TypeError(f'{type(module).__name__}.{path} ({type(backbone).__name__}) has no get_layer_id(); '
                            'layer decay needs a vitbench backbone (set paramwise_cfg.backbone to its path)')
        prefix = f'{path}.' if path else ''
        top = backbone.num_layers + 1
        no_decay_names = set(getattr(backbone, 'no_weight_decay', set)())

        groups = {}
        for name, param in module.named_parameters():
            if not param.requires_grad:
                continue
            in_backbone = name.startswith(prefix)
            local = name[len(prefix):] if in_backbone else name
            layer_id = backbone.get_layer_id(local) if in_backbone else top
            no_decay = param.ndim <= 1 or (in_backbone and local in no_decay_names)
            scale = decay_rate ** (top - layer_id)
            group = groups.setdefault((layer_id, no_decay), dict(
                params=[], param_names=[], lr=self.base_lr * scale, lr_scale=scale, layer_id=layer_id,
                weight_decay=0.0 if no_decay else self.base_wd))
            group['params'].append(param)
            group['param_names'].append(name)
        params.extend(groups[key] for key in sorted(groups))
