"""``work_dir/param_groups.json``: what the optimiser does to every parameter of a training, beside its
``result.json``.

One entry per parameter: its name, shape, whether it trains, and, for those that do, the learning rate it starts
from (before warm-up), its scale (layer-wise decay), its weight decay, its layer id (``LayerDecayOptimWrapperConstructor``)
and the index of its optimiser group. A recipe's choices (no weight decay on norms, biases and position embeddings;
a rate per layer in fine-tuning; a frozen backbone in a linear probe) can then be read, diffed between two runs,
and tested: a parameter that trains and is in no optimiser group would silently not train, and stops the run here.
"""
import json
import os.path as osp
from typing import Dict, List

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from torch import nn

from vitbench.fileio import atomic_write_text
from vitbench.registry import HOOKS

FILENAME = 'param_groups.json'


def param_table(model: nn.Module, optimizers: Dict[str, object]) -> List[dict]:
    """The table of ``model``'s parameters under ``optimizers`` ({name: torch optimizer}: one, or an
    ``OptimWrapperDict``'s); raises when a trainable parameter is in no group or in two."""
    where: Dict[int, tuple] = {}
    for opt_name, optimizer in optimizers.items():
        for index, group in enumerate(optimizer.param_groups):
            for param in group['params']:
                if id(param) in where:
                    raise ValueError(f'a parameter is in two optimiser groups ({where[id(param)][:2]} and '
                                     f'{(opt_name, index)}): it would be updated twice')
                where[id(param)] = (opt_name, index, group)
    rows, orphans = [], []
    for name, param in model.named_parameters():
        row = dict(name=name, shape=list(param.shape), trains=param.requires_grad)
        if id(param) in where:
            opt_name, index, group = where[id(param)]
            row.update(optimizer=opt_name, group=index, lr=group.get('initial_lr', group['lr']),
                       lr_scale=group.get('lr_scale', 1.0), weight_decay=group.get('weight_decay', 0.0),
                       layer_id=group.get('layer_id'))
        elif param.requires_grad:
            orphans.append(name)
        rows.append(row)
    if orphans:
        raise ValueError(f'{len(orphans)} trainable parameter(s) in no optimiser group, which would not train: '
                         f'{", ".join(orphans[:5])}{" ..." if len(orphans) > 5 else ""}')
    return rows


def optimizers_of(optim_wrapper) -> Dict[str, object]:
    """{name: torch optimizer} of an ``OptimWrapper`` or an ``OptimWrapperDict``."""
    if hasattr(optim_wrapper, 'optim_wrappers'):
        return {k: w.optimizer for k, w in optim_wrapper.optim_wrappers.items()}
    return {'optimizer': optim_wrapper.optimizer}


@HOOKS.register_module()
class ParamTableHook(Hook):
    """Writes ``work_dir/param_groups.json`` before training (module docstring); rank 0."""

    priority = 'VERY_LOW'  # after the optimiser exists and the schedulers set ``initial_lr``

    def before_train(self, runner) -> None:
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        rows = param_table(model, optimizers_of(runner.optim_wrapper))
        if runner.rank == 0:
            atomic_write_text(json.dumps(rows, indent=1), osp.join(runner.work_dir, FILENAME))
