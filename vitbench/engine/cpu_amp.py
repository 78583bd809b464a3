"""Mixed-precision training on CPU: mmengine's ``OptimWrapper`` with bfloat16 autocast around the forward pass.

mmengine's ``AmpOptimWrapper`` refuses to run without an accelerator. On CPU, autocast computes in bfloat16,
which has float32's exponent range and so needs none of the loss scaling that wrapper exists for; the
optimizer step and the master weights stay float32. ``tools/train.py --amp`` picks this wrapper on CPU.

    optim_wrapper = dict(type='vitbench.CPUAmpOptimWrapper', optimizer=dict(type='AdamW', lr=1e-3))
"""
import contextlib

import torch
from mmengine.optim import OptimWrapper

from vitbench.registry import OPTIM_WRAPPERS


@OPTIM_WRAPPERS.register_module()
class CPUAmpOptimWrapper(OptimWrapper):

    def __init__(self, dtype: str = 'bfloat16', **kwargs):
        super().__init__(**kwargs)
        if dtype not in ('bfloat16', 'float16'):
            raise ValueError(f"CPUAmpOptimWrapper: dtype must be 'bfloat16' or 'float16', got {dtype!r}")
        self.cast_dtype = getattr(torch, dtype)

    @contextlib.contextmanager
    def optim_context(self, model: torch.nn.Module):
        with super().optim_context(model), torch.autocast('cpu', dtype=self.cast_dtype):
            yield
