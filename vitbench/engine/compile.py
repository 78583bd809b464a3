"""What ``tools/train.py --compile`` compiles for each task, and when AdamW runs fused.

Every task but detection compiles the model's whole training step: mmengine's ``compile`` config key, which the
Runner applies as ``torch.compile(model.train_step)`` after wrapping the model (DDP included) and loading or
resuming checkpoints. Dynamo traces the data preprocessor, the forward under autocast and the loss into graphs,
breaks the graph at ``loss.backward()`` (AOTAutograd compiles the backward of each forward graph) and traces the
optimizer step. Validation and testing stay eager (mmengine compiles ``train_step`` only).

Detection (Mask R-CNN) compiles its backbone only (:data:`DET_BACKBONE_ONLY`): ``nn.Module.compile`` in place,
so the parameter names, the checkpoints and ``backbone.pth`` are those of an eager run.

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

TRAIN_STEP = 'train_step'  # result.json's cost.compiled: what was compiled
BACKBONE = 'backbone'
DET_BACKBONE_ONLY = ("--compile: detection compiles the backbone only (Mask R-CNN's RPN and RoI heads have "
                     'data-dependent shapes: proposals left after NMS, sampled RoIs, masks per instance; and '
                     "mmcv's RoIAlign / nms are opaque to dynamo)")
ADAMW = ('AdamW', 'torch.optim.AdamW', 'mmengine.AdamW')  # names mmengine's OPTIMIZERS gives torch's AdamW


class CompilePlan(NamedTuple):
    """``scope``: :data:`TRAIN_STEP` or :data:`BACKBONE`; ``why`` the scope is not the whole step (None if it is)."""
    scope: str
    why: Optional[str] = None


def compile_plan(task: Optional[str]) -> CompilePlan:
    """What ``--compile`` compiles for a config whose ``experiment.task`` is ``task`` (None: no experiment)."""
    if task == 'det':
        return CompilePlan(BACKBONE, DET_BACKBONE_ONLY)
    return CompilePlan(TRAIN_STEP)


def configure_dynamo() -> None:
    """Random numbers drawn with numpy inside the compiled step (timm's Mixup / CutMix draw their lambda and box
    with ``np.random``) come from numpy's generator, as in eager mode: dynamo would otherwise trace them into
    graphs that draw from torch's, and a compiled run would mix other batches than the eager run of the same
    seed. torch's own random ops inside the graphs (MAE's masking noise, drop path) come from inductor's
    generator, seeded from torch's: the same distribution, other draws than eager."""
    import torch._dynamo
    torch._dynamo.config.use_numpy_random_stream = True


def compile_backbone(runner, options: dict) -> None:
    """Compile ``model.backbone`` of the Runner's model in place (through DDP's wrapper, if any)."""
    model = runner.model.module if is_model_wrapper(runner.model) else runner.model
    backbone = getattr(model, 'backbone', None)
    if backbone is None:
        raise ValueError(f'--compile: {type(model).__name__} has no backbone to compile')
    backbone.compile(**options)


class PlainParamGroups(Hook):
    """Turns the optimizers' parameter groups into plain dicts before training. mmengine builds the optimizer
    from a config, so the groups a constructor makes (paramwise_cfg, layer decay) arrive as ConfigDicts, which
    dynamo cannot trace when it compiles the optimizer step inside ``train_step`` (torch 2.14:
    ``InternalTorchDynamoError: 'UserDefinedDictVariable' object has no attribute 'items'``)."""

    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        wrappers = runner.optim_wrapper
        for wrapper in (wrappers.values() if isinstance(wrappers, OptimWrapperDict) else [wrappers]):
            groups = wrapper.optimizer.param_groups
            groups[:] = [dict(group) if type(group) is not dict else group for group in groups]


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
