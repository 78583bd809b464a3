"""What ``tools/train.py --compile`` compiles for each task, and when AdamW runs fused.

Every task but detection compiles the model's whole training step: mmengine's ``compile`` config key, which the
Runner applies as ``torch.compile(model.train_step)`` after wrapping the model (DDP included) and loading or
resuming checkpoints. Dynamo traces the forward under autocast and the loss into graphs; AOTAutograd compiles the
backward of each. The data preprocessor and the optimizer step stay eager (:func:`keep_data_preprocessor_eager`,
:class:`EagerOptimizerStep`), and so do validation and testing (mmengine compiles ``train_step`` only).
Random ops inside the graphs (MAE's masking noise, drop path) draw from inductor's generator, seeded from
torch's: the same distribution, other draws than an eager run of the same seed.

A task whose head runs mmcv's RoIAlign / nms (``Task.roi_ops``: detection's Mask R-CNN) compiles its backbone's
training forward only (:data:`DET_BACKBONE_ONLY`), in place, so the parameter names, the checkpoints and
``backbone.pth`` are those of an eager run.

Fused AdamW (``torch.optim.AdamW(fused=True)``, one kernel for all parameters): on CUDA it computes the
same update as the default (foreach) implementation up to float rounding, so :func:`use_fused_adamw` turns it
on for AdamW on a GPU unless the config chose an implementation (``fused``, ``foreach``) or needs the
differentiable one. It needs every parameter on the GPU and floating point, which the Runner's models are.
"""
from typing import NamedTuple, Optional

import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.optim import OptimWrapperDict

from vitbench.results.schema import has_roi_ops

TRAIN_STEP = 'train_step'  # result.json's cost.compiled: what was compiled
BACKBONE = 'backbone'
# the same for every roi_ops task (the name is older than Task.roi_ops)
DET_BACKBONE_ONLY = ("--compile: a head with mmcv's RoIAlign / nms compiles the backbone only (its proposal and RoI "
                     'heads have data-dependent shapes: proposals left after NMS, sampled RoIs, masks per instance; '
                     "and mmcv's RoIAlign / nms are opaque to dynamo)")
ADAMW = ('AdamW', 'torch.optim.AdamW', 'mmengine.AdamW')  # names mmengine's OPTIMIZERS gives torch's AdamW


class CompilePlan(NamedTuple):
    """``scope``: :data:`TRAIN_STEP` or :data:`BACKBONE`; ``why`` the scope is not the whole step (None if it is)."""
    scope: str
    why: Optional[str] = None


def compile_plan(task: Optional[str]) -> CompilePlan:
    """What ``--compile`` compiles for a config whose ``experiment.task`` is ``task`` (None: no experiment)."""
    if has_roi_ops(task):
        return CompilePlan(BACKBONE, DET_BACKBONE_ONLY)
    return CompilePlan(TRAIN_STEP)


def keep_data_preprocessor_eager(runner) -> None:
    """The model's data preprocessor runs outside the compiled step. Its work is cheap (normalise, pad, stack)
    but its random batch augmentations are not traceable as graphs: timm's Mixup / CutMix draw their lambda and
    box with numpy and Python's ``random``, values dynamo bakes into the graph and guards on, so the deit3
    recipe recompiled its step at every iteration (~70 s each on CPU); and the toolboxes' preprocessors pad
    batches to sizes that vary. Eager, they draw what an eager run draws."""
    model = runner.model.module if is_model_wrapper(runner.model) else runner.model
    preprocessor = getattr(model, 'data_preprocessor', None)
    if preprocessor is not None:
        preprocessor.forward = torch.compiler.disable(preprocessor.forward)


def compile_backbone(runner, options: dict) -> None:
    """Compile the forward of ``model.backbone`` of the Runner's model (through DDP's wrapper, if any) for
    training; in eval mode (validation, testing) it runs eager, as mmengine's compiled ``train_step`` leaves
    them. The module keeps its parameters and their names."""
    model = runner.model.module if is_model_wrapper(runner.model) else runner.model
    backbone = getattr(model, 'backbone', None)
    if backbone is None:
        raise ValueError(f'--compile: {type(model).__name__} has no backbone to compile')
    eager = backbone.forward
    compiled = torch.compile(eager, **options)

    def forward(*args, **kwargs):
        return (compiled if backbone.training else eager)(*args, **kwargs)

    backbone.forward = forward


class EagerOptimizerStep(Hook):
    """The optimizer step (``update_params``: backward, gradient clipping, step) runs outside the compiled
    ``train_step``; the backward still runs the graphs AOTAutograd compiled for the forward. Traced, the step
    recompiled whenever the learning rate changed (the schedulers set it as a Python float, which dynamo
    specialises: timm's LAMB recompiled at every iteration of the deit3 demo), and dynamo could not trace the
    ConfigDict parameter groups mmengine builds from a paramwise config (torch 2.14: ``InternalTorchDynamoError:
    'UserDefinedDictVariable' object has no attribute 'items'``). On a GPU AdamW runs fused: one kernel, nothing
    left to compile."""

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        wrappers = runner.optim_wrapper
        for wrapper in (wrappers.values() if isinstance(wrappers, OptimWrapperDict) else [wrappers]):
            wrapper.update_params = torch.compiler.disable(wrapper.update_params)


def use_fused_adamw(optimizer: Optional[dict], device: str) -> bool:
    """Whether AdamW should run fused: ``optimizer`` is the config's ``optim_wrapper.optimizer``, ``device``
    the one it trains on ('cuda' or 'cpu')."""
    if device != 'cuda' or not isinstance(optimizer, dict):
        return False
    kind = optimizer.get('type')
    if not (kind in ADAMW if isinstance(kind, str) else kind is torch.optim.AdamW):
        return False
    chosen = ('fused', 'foreach')  # the config chose an implementation: keep it (fused and foreach exclude each other)
    return not any(optimizer.get(key) is not None for key in chosen) and not optimizer.get('differentiable')
