"""Measuring steps on a CPU or a CUDA device, for ``tools/benchmark.py``: the device to run on, autocast for
it, side-by-side timing and the peak memory of one step. It knows no model: a step is any callable.

* **Timing.** :func:`time_side_by_side` warms every step up, then alternates timed rounds between them (the
  order reversed every round) and reports each one's fastest and median round, so that a ratio of two steps
  compares them under the same conditions. On CUDA a round is timed with CUDA events and every round ends with
  a synchronisation: no queued work of one step is ever counted in the other's round. On CPU a round is timed
  by the wall clock or by the process CPU time (``clock='cpu'``: waiting for a shared CPU does not count).
* **Peak memory.** :func:`peak_memory_mb` is the peak increase of what a step holds while it runs: on CUDA the
  allocator's peak (``max_memory_allocated`` after ``reset_peak_memory_stats``) over what was allocated
  before, on CPU the process's peak resident-memory increase (:class:`PeakRSS`, Linux).
"""
import contextlib
import ctypes
import statistics
import time
from typing import Callable, Dict, Optional, Tuple

import torch

CLOCKS = {'wall': time.perf_counter, 'cpu': time.process_time}
DTYPES = {'fp32': None, 'bf16': torch.bfloat16, 'fp16': torch.float16}


def default_device() -> str:
    """'cuda' where a CUDA device is available, else 'cpu'."""
    return 'cuda' if torch.cuda.is_available() else 'cpu'


def resolve_device(name: Optional[str]) -> torch.device:
    """The device of ``--device`` (None: :func:`default_device`); a CUDA request without CUDA is an error."""
    device = torch.device(name or default_device())
    if device.type == 'cuda' and not torch.cuda.is_available():
        raise ValueError(f'--device {name}: CUDA is not available here (torch {torch.__version__}, '
                         f'built with CUDA {torch.version.cuda}); use --device cpu')
    if device.type not in ('cpu', 'cuda'):
        raise ValueError(f"--device {name}: expected 'cpu' or 'cuda[:N]'")
    if device.type == 'cuda' and device.index is None:
        device = torch.device('cuda', torch.cuda.current_device())
    return device


def device_name(device: torch.device) -> str:
    if device.type == 'cuda':
        return torch.cuda.get_device_name(device)
    from .cpu import cpu_name
    return cpu_name()


def synchronize(device: torch.device) -> None:
    """Wait for the work queued on ``device`` (nothing to wait for on CPU)."""
    if device.type == 'cuda':
        torch.cuda.synchronize(device)


def autocast(device: torch.device, dtype: str):
    """Autocast to ``dtype`` ('bf16', 'fp16') on the device's type; 'fp32': no autocast."""
    if DTYPES[dtype] is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=DTYPES[dtype])


def _cpu_round(fn: Callable, iters: int, clock: Callable) -> float:
    t = clock()
    for _ in range(iters):
        fn()
    return (clock() - t) / iters


def _cuda_round(fn: Callable, iters: int, device: torch.device) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    synchronize(device)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def time_side_by_side(fns: Dict[str, Callable], rounds: int, iters: int = 1, device='cpu', clock: str = 'wall',
                      warmup: int = 1) -> Dict[str, Tuple[float, float]]:
    """``{name: (fastest, median) seconds per call}`` of each step in ``fns``.

    Each step first runs ``warmup`` times (allocator, kernels and their autotuning, the autograd graph; a
    compiled step compiles there), then ``rounds`` timed rounds of ``iters`` calls alternate between the steps,
    in reversed order every other round. ``clock`` ('wall' or 'cpu') applies on CPU; CUDA rounds are timed
    with CUDA events.
    """
    device = torch.device(device)
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    synchronize(device)
    times = {k: [] for k in fns}
    keys = list(fns)
    for r in range(rounds):
        for k in (keys if r % 2 == 0 else keys[::-1]):
            if device.type == 'cuda':
                times[k].append(_cuda_round(fns[k], iters, device))
            else:
                times[k].append(_cpu_round(fns[k], iters, CLOCKS[clock]))
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


def clock_name(device: torch.device, clock: str) -> str:
    """What the rounds were timed by: 'cuda-events', or the CPU clock's name."""
    return 'cuda-events' if device.type == 'cuda' else clock


class PeakRSS:
    """Peak resident-memory increase of the process during a call (Linux: VmHWM reset through
    /proc/self/clear_refs, after returning freed heap to the OS with malloc_trim). None elsewhere."""

    def __init__(self):
        try:
            self.libc = ctypes.CDLL('libc.so.6')
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            self.ok = True
        except OSError:
            self.ok = False

    @staticmethod
    def _status(key):
        with open('/proc/self/status') as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024

    def __call__(self, fn: Callable) -> Optional[float]:
        if not self.ok:
            return None
        self.libc.malloc_trim(0)
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')
        base = self._status('VmRSS:')
        fn()
        return (self._status('VmHWM:') - base) / 2 ** 20


def cuda_peak_mb(fn: Callable, device: torch.device) -> float:
    """The CUDA allocator's peak during ``fn`` over what was allocated before it, in MiB."""
    synchronize(device)
    before = torch.cuda.memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    fn()
    synchronize(device)
    return (torch.cuda.max_memory_allocated(device) - before) / 2 ** 20


def peak_memory_mb(fn: Callable, device, peak_rss: Optional[PeakRSS] = None) -> Optional[float]:
    """Peak memory increase during ``fn`` in MiB: the CUDA allocator's on CUDA, the resident set's on CPU
    (None where it cannot be read)."""
    device = torch.device(device)
    if device.type == 'cuda':
        return cuda_peak_mb(fn, device)
    return (peak_rss or PeakRSS())(fn)
