"""Where a step's time goes: the device time of its kernels (CUDA) or operators (CPU) per step, by kind.

A step that costs more than its FLOPs say spends the difference outside the matrix products: in attention
kernels that run below the GEMM rate, or in memory-bound work (normalisation, activations, casts, residual adds),
which follows the bytes moved, not the FLOPs. ``tools/benchmark.py pretrain --profile`` prints this breakdown
beside each step time; it is how the MAE-B / supervised ViT-B ratio of docs/benchmarks.md was explained.

Kinds, by kernel or operator name (the first that matches):

* ``attention``: fused attention kernels (flash, cuDNN's SDPA, memory-efficient) and CPU SDPA / softmax;
* ``optimizer``: AdamW's fused or multi-tensor kernels (CPU: every operator called under ``optimizer.step``);
* ``matmul``: cuBLAS / CUTLASS GEMMs (``nvjet``, ``sm90_xmma`` ...) and CPU ``addmm`` / ``mm`` / ``bmm``;
* ``convolution``: convolutions (the patch embedding on CPU; cuDNN's on CUDA, named ``conv`` / ``implicit``);
* ``normalization``: LayerNorm / BatchNorm forward and backward, the weight-gradient reductions included;
* ``fused``: kernels that ``torch.compile`` generated (Triton on CUDA), each several elementwise operations;
* ``activation``: GELU and the like, forward and backward;
* ``copy``: casts and copies (autocast's bf16 copies of the weights, layout changes);
* ``other``: the rest (elementwise, reductions, indexing).

Self time is counted, so an operator is not counted again through the operators it calls.
"""
import re
from typing import Callable, Dict, List, Tuple

import torch

KINDS: Tuple[Tuple[str, 're.Pattern'], ...] = (
    ('attention', re.compile(r'flash|fmha|sdpa|scaled_dot_product|attention|softmax', re.I)),
    ('optimizer', re.compile(r'adam|multi_tensor|foreach', re.I)),
    ('normalization', re.compile(r'layer_?norm|batch_?norm|GammaBeta', re.I)),
    ('matmul', re.compile(r'gemm|cutlass|xmma|nvjet|cublas|wgmma|splitk|aten::(addmm|mm|bmm|baddbmm)$', re.I)),
    ('convolution', re.compile(r'conv|implicit_convolve|winograd', re.I)),
    ('fused', re.compile(r'triton', re.I)),
    ('activation', re.compile(r'gelu|silu|relu|tanh', re.I)),
    ('copy', re.compile(r'copy|_to_copy|convert|cast', re.I)),
)


def kind_of(name: str) -> str:
    """The kind of the kernel or operator called ``name`` (:data:`KINDS`, else 'other')."""
    return next((kind for kind, pattern in KINDS if pattern.search(name)), 'other')


def _counted(name: str, device_type: str) -> bool:
    if device_type == 'cuda':  # kernels only: the CPU-side operators and runtime calls have no device self time
        return not name.startswith(('aten::', 'cuda', 'ProfilerStep'))
    return name.startswith('aten::')  # operators; autograd nodes and Python frames only call them


def _under_optimizer_step(event) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith('Optimizer.step'):
            return True
        parent = parent.cpu_parent
    return False


def kernel_breakdown(step: Callable[[], None], device, steps: int = 3, top: int = 10) -> Dict:
    """Profile ``steps`` calls of ``step`` (already warmed up) on ``device``: ``{'ms_per_step': {kind: ms},
    'total_ms': ..., 'top': [(ms, kind, calls per step, name), ...]}``, device self time per step (CPU: the
    operators' self CPU time)."""
    from torch.profiler import ProfilerActivity, profile

    device = torch.device(device)
    cuda = device.type == 'cuda'
    if cuda:
        torch.cuda.synchronize(device)
    with profile(activities=[ProfilerActivity.CUDA if cuda else ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            step()
        if cuda:
            torch.cuda.synchronize(device)
    # (name, kind) -> [microseconds, calls]
    totals: Dict[Tuple[str, str], List[float]] = {}
    if cuda:
        timed = ((e.key, kind_of(e.key), e.self_device_time_total, e.count) for e in prof.key_averages()
                 if _counted(e.key, 'cuda'))
    else:  # CPU AdamW runs as plain operators (sqrt, mul_, ...): its kind comes from the ``optimizer.step`` above
        timed = ((e.name, 'optimizer' if _under_optimizer_step(e) else kind_of(e.name), e.self_cpu_time_total, 1)
                 for e in prof.events() if _counted(e.name, 'cpu'))
    for name, kind, us, count in timed:
        entry = totals.setdefault((name, kind), [0., 0])
        entry[0] += us
        entry[1] += count
    kinds: Dict[str, float] = {}
    kernels: List[Tuple[float, str, int, str]] = []
    for (name, kind), (us, count) in totals.items():
        if us <= 0:
            continue
        ms = us / 1e3 / steps
        kinds[kind] = kinds.get(kind, 0.) + ms
        kernels.append((ms, kind, max(1, round(count / steps)), name[:120]))
    kernels.sort(key=lambda k: -k[0])
    return dict(ms_per_step={k: round(v, 3) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])},
                total_ms=round(sum(kinds.values()), 3),
                top=[(round(ms, 3), kind, n, name) for ms, kind, n, name in kernels[:top]])


def format_breakdown(breakdown: Dict) -> str:
    """One line: each kind's milliseconds per step and share of the profiled total."""
    total = breakdown['total_ms'] or 1.
    return ', '.join(f'{kind} {ms:.1f} ms ({100 * ms / total:.0f} %)' for kind, ms in breakdown['ms_per_step'].items())
