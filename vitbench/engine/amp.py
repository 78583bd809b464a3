"""Mixed precision that matches the hardware: which precision ``tools/train.py --amp`` trains in, and the optim
wrapper that autocasts to bfloat16 without loss scaling.

    bf16 GPU (compute capability >= 8.0: A100, H100, ...)   bfloat16 autocast, no loss scaling  (AutocastOptimWrapper)
    other GPUs (V100, T4, ...)                              float16 autocast, dynamic loss scaling (mmengine's AmpOptimWrapper)
    any GPU, a roi_ops task (detection)                     float16 autocast, dynamic loss scaling (see DET_FP16)
    CPU with bf16 instructions                              bfloat16 autocast (CPUAmpOptimWrapper)
    CPU without them, and a roi_ops task on CPU             float32: --amp is refused, --amp auto keeps float32

bfloat16 has float32's exponent range, so gradients neither underflow nor overflow and the loss scaler float16
needs is only overhead (mmengine's ``AmpOptimWrapper(dtype='bfloat16')`` still builds a ``GradScaler``, multiplies
the loss by 2**16, unscales the gradients, checks them for inf/NaN and skips steps that have some: that is what
:class:`AutocastOptimWrapper` leaves out). :func:`amp_plan` is a pure function of the device, its bf16 support and
the task, so that the GPU branches are tested on CPU.
"""
import contextlib
import os
from typing import NamedTuple, Optional

import torch
from mmengine.optim import OptimWrapper

from vitbench.refusal import RefusalValueError
from vitbench.registry import OPTIM_WRAPPERS
from vitbench.results.schema import has_roi_ops

PRECISIONS = ('bf16', 'fp16', 'fp32')  # result.json's cost.precision

# Why a task whose head runs mmcv's RoIAlign (``Task.roi_ops``; the built-in one: detection) trains in float16
# with loss scaling even where the GPU has bf16 (the message says "detection": tests/test_engine_amp.py pins what
# it prints). mmdet's SingleRoIExtractor casts the RoIs to the features' dtype (``rois.type_as(feats[0])``, mmdet
# 3.3) and hands both to mmcv's RoIAlign, whose CUDA kernel (mmcv 2.1.0, roi_align_cuda.cu) dispatches float32 and
# float16 only (AT_DISPATCH_FLOATING_TYPES_AND_HALF, rois read as the features' scalar type): under bfloat16
# autocast the features are bf16 and the first RoI head step fails. Running the ops in float32 instead would mean
# patching mmdet's extractor, and bf16 RoI corners would anyway be rounded to 4-8 px at 1024 px (8-bit mantissa)
# where float16 keeps 0.5-1 px. float16 with dynamic loss scaling is what mmdet and ViTDet train Mask R-CNN with.
DET_FP16 = ("detection trains in float16 with loss scaling: mmcv's CUDA RoIAlign has no bfloat16 kernel and "
            "mmdet casts the RoIs to the features' dtype")
DET_CPU = "mmcv's CPU kernels (nms, RoIAlign) take float32 only"


class AmpPlan(NamedTuple):
    """What ``--amp`` trains in: ``precision`` (one of :data:`PRECISIONS`), the ``optim_wrapper`` keys that make it
    so (None: float32, the config's wrapper unchanged) and ``why`` it is not bfloat16 (None when it is)."""
    precision: str
    wrapper: Optional[dict]
    why: Optional[str] = None


def amp_plan(device: str, task: Optional[str], gpu_bf16: bool = False, cpu_fast_bf16: bool = True) -> AmpPlan:
    """The mixed precision for training ``task`` on ``device`` ('cuda' or 'cpu'). ``gpu_bf16``: the GPU computes
    in bfloat16 natively (:func:`cuda_has_bf16`); ``cpu_fast_bf16``: the CPU has bf16 instructions
    (``vitbench.engine.cpu_amp.cpu_has_fast_bf16``)."""
    fp16 = AmpPlan('fp16', dict(type='AmpOptimWrapper', dtype='float16', loss_scale='dynamic'))
    if device == 'cuda':
        if has_roi_ops(task):
            return fp16._replace(why=DET_FP16)
        if not gpu_bf16:
            return fp16._replace(why='this GPU has no native bfloat16 (compute capability < 8.0)')
        return AmpPlan('bf16', dict(type='vitbench.AutocastOptimWrapper', dtype='bfloat16', device_type='cuda'))
    if has_roi_ops(task):
        return AmpPlan('fp32', None, DET_CPU)
    if not cpu_fast_bf16:
        from .cpu_amp import SLOW_BF16
        return AmpPlan('fp32', None, SLOW_BF16)
    return AmpPlan('bf16', dict(type='vitbench.CPUAmpOptimWrapper', dtype='bfloat16'))


def cuda_has_bf16() -> bool:
    """Whether this process's GPU computes in bfloat16 natively: compute capability >= 8.0 (A100, H100, ...), or
    ROCm. Not plain ``torch.cuda.is_bf16_supported()``: by default it also says True for GPUs that only emulate
    bf16 (V100, T4), where bf16 autocast runs slower than float16. The GPU is the one this rank will train on
    (``LOCAL_RANK``; the Runner sets it later), so that no rank touches GPU 0 for the question."""
    if not torch.cuda.is_available():
        return False
    if torch.version.hip:
        return True
    index = int(os.environ.get('LOCAL_RANK', 0)) % torch.cuda.device_count()
    return torch.cuda.get_device_capability(index) >= (8, 0)


@OPTIM_WRAPPERS.register_module()
class AutocastOptimWrapper(OptimWrapper):
    """mmengine's ``OptimWrapper`` with autocast around the forward pass and no loss scaling: for bfloat16, whose
    range needs none. The optimizer step and the master weights stay float32.

        optim_wrapper = dict(type='vitbench.AutocastOptimWrapper', dtype='bfloat16', device_type='cuda',
                             optimizer=dict(type='AdamW', lr=1e-3))

    ``device_type``: 'cuda' or 'cpu'; None, the device of the model's first parameter."""

    def __init__(self, dtype: str = 'bfloat16', device_type: Optional[str] = None, **kwargs):
        super().__init__(**kwargs)
        if dtype not in ('bfloat16', 'float16'):
            raise ValueError(f"{type(self).__name__}: dtype must be 'bfloat16' or 'float16', got {dtype!r}")
        if dtype == 'float16' and device_type == 'cuda':  # float16 gradients underflow without a loss scaler
            raise RefusalValueError(f"{type(self).__name__}: float16 on a GPU needs loss scaling; set "
                                    "optim_wrapper.type='AmpOptimWrapper' (mmengine's), or "
                                    "optim_wrapper.dtype='bfloat16'")
        self.cast_dtype = getattr(torch, dtype)
        self.device_type = device_type

    def load_state_dict(self, state_dict: dict) -> None:
        # a checkpoint of a float16 run (AmpOptimWrapper) resumed in bfloat16: its loss scale means nothing here
        state_dict = {k: v for k, v in state_dict.items() if k != 'loss_scaler'}
        super().load_state_dict(state_dict)

    @contextlib.contextmanager
    def optim_context(self, model: torch.nn.Module):
        device_type = self.device_type
        if device_type is None:
            param = next(iter(model.parameters()), None)
            device_type = param.device.type if param is not None else 'cpu'
        with super().optim_context(model), torch.autocast(device_type, dtype=self.cast_dtype):
            yield
