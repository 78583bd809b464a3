"""Model FLOPs utilisation (MFU): the FLOP rate a model step achieves over a peak rate.

A step's model FLOPs follow the usual convention: a forward pass costs 2 x MACs per image (one multiply-add is
two FLOPs) and a training step 6 x MACs (the backward pass twice the forward), so

    MFU = 6 * MACs * batch / seconds / peak      (training step; forward only: 2 * MACs * batch / seconds / peak)

with MACs as ``backbones.complexity.count_flops`` counts them (mmengine / fvcore "FLOPs", which are MACs).
Two peaks: the dense matrix-product rate *measured* in the same run (:func:`gemm_rate`: an 8192³ product on
CUDA, a smaller one on CPU), what the device can reach in practice, and the *datasheet* dense bf16 rate of a
GPU whose name is known (:func:`datasheet_bf16_flops`), the number MFU is usually quoted against.
"""
import re
import time
from typing import Optional

import torch

# dense (not 2:4 sparse) bf16 tensor-core peak, FLOP/s, by the name torch reports
DATASHEET_BF16 = (
    (re.compile(r'H100.*PCIe', re.I), 756e12),
    (re.compile(r'H100.*(SXM|HBM3)|GH200|H200(?!.*NVL)', re.I), 989e12),
    (re.compile(r'A100', re.I), 312e12),
)
GEMM_SIZE = {'cuda': 8192, 'cpu': 1024}


def datasheet_bf16_flops(name: str) -> Optional[float]:
    """The datasheet dense bf16 peak of the GPU called ``name`` (``torch.cuda.get_device_name``), FLOP/s;
    None for a name not in :data:`DATASHEET_BF16` (and for CPUs)."""
    for pattern, flops in DATASHEET_BF16:
        if pattern.search(name):
            return flops
    return None


def train_flops(macs: float, batch: int, train: bool = True, frozen_macs: float = 0.) -> float:
    """Model FLOPs of one step on ``batch`` images of ``macs`` multiply-adds each: 6 x MACs for training
    (forward + backward), 2 x MACs forward only. ``frozen_macs`` (part of ``macs``) run forward only, without
    autograd (a frozen teacher): 2 x."""
    if not train:
        return 2. * macs * batch
    return (6. * (macs - frozen_macs) + 2. * frozen_macs) * batch


def mfu(macs: float, batch: int, seconds: float, peak_flops: Optional[float], train: bool = True,
        frozen_macs: float = 0.) -> Optional[float]:
    """Achieved model FLOP/s over ``peak_flops`` (None without a peak)."""
    if not peak_flops or not macs or not seconds:
        return None
    return train_flops(macs, batch, train, frozen_macs) / seconds / peak_flops


def gemm_rate(device, dtype: torch.dtype = torch.bfloat16, size: Optional[int] = None, iters: int = 10,
              warmup: int = 3) -> float:
    """FLOP/s of a dense ``size``³ matrix product in ``dtype`` on ``device`` (random operands), the best of
    ``iters`` timed products after ``warmup``; CUDA products are timed with CUDA events."""
    device = torch.device(device)
    n = size or GEMM_SIZE[device.type]
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    out = torch.empty(n, n, device=device, dtype=dtype)
    for _ in range(warmup):
        torch.mm(a, b, out=out)
    best = float('inf')
    for _ in range(iters):
        if device.type == 'cuda':
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize(device)
            start.record()
            torch.mm(a, b, out=out)
            end.record()
            end.synchronize()
            seconds = start.elapsed_time(end) / 1e3
        else:
            t = time.perf_counter()
            torch.mm(a, b, out=out)
            seconds = time.perf_counter() - t
        best = min(best, seconds)
    return 2. * n ** 3 / best
