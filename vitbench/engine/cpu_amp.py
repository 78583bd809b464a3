"""Mixed-precision training on CPU: mmengine's ``OptimWrapper`` with bfloat16 autocast around the forward pass.

mmengine's ``AmpOptimWrapper`` refuses to run without an accelerator. On CPU, autocast computes in bfloat16,
which has float32's exponent range and so needs none of the loss scaling that wrapper exists for; the
optimizer step and the master weights stay float32. ``tools/train.py --amp`` picks this wrapper on CPU.

    optim_wrapper = dict(type='vitbench.CPUAmpOptimWrapper', optimizer=dict(type='AdamW', lr=1e-3))

bfloat16 is only fast on CPUs with bf16 instructions (AVX512-BF16, AMX). Elsewhere (AVX2 only) torch emulates
it and autocast runs about 30x slower than float32 (DeiT III-S: 0.18 vs 6.05 images/s): :func:`cpu_has_fast_bf16`
tells the two apart; ``tools/train.py --amp`` refuses such a CPU and ``tools/benchmark.py`` skips its bf16 rows.
"""
from mmengine.logging import print_log

from vitbench.registry import OPTIM_WRAPPERS

from .amp import AutocastOptimWrapper
from .cpu import cpu_flags

# CPU flags (/proc/cpuinfo) of the bf16 instructions autocast's bf16 kernels run on. torch's own report is no
# substitute: torch.backends.cpu.get_cpu_capability() says 'AVX512' on CPUs with and without AVX512-BF16 (torch 2.14).
FAST_BF16_FLAGS = ('avx512_bf16', 'amx_bf16')


def cpu_has_fast_bf16() -> bool:
    """Whether bfloat16 autocast on this CPU runs on bf16 instructions. Where the flags cannot be read (not
    Linux) it is assumed so: the check guards against a slowdown, it is no reason to refuse an unknown CPU."""
    flags = cpu_flags()
    return not flags or any(f in flags for f in FAST_BF16_FLAGS)


SLOW_BF16 = (f'this CPU has no bfloat16 instructions ({" / ".join(FAST_BF16_FLAGS)} missing from /proc/cpuinfo), '
             'so bfloat16 autocast would run about 30x slower than float32')


@OPTIM_WRAPPERS.register_module()
class CPUAmpOptimWrapper(AutocastOptimWrapper):
    """:class:`~vitbench.engine.amp.AutocastOptimWrapper` on CPU, with a warning where bf16 would be slow."""

    def __init__(self, dtype: str = 'bfloat16', **kwargs):
        super().__init__(dtype=dtype, device_type='cpu', **kwargs)
        if dtype == 'bfloat16' and not cpu_has_fast_bf16():  # a config that names this wrapper itself
            print_log(f'CPUAmpOptimWrapper: {SLOW_BF16}; remove it from optim_wrapper to train in float32',
                      logger='current', level=30)
