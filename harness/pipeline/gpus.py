"""Which GPUs the local stages of a pipeline run on (:class:`GpuPool`), and which GPUs there are
(:func:`visible_gpus`).

A train / test stage gets ``gpus_per_stage`` devices through ``CUDA_VISIBLE_DEVICES``: the ones the fewest running
stages hold, so ``--jobs 8`` on an 8-GPU node gives each stage its own GPU, and ``--jobs 4`` on one GPU puts four
small stages on it side by side (a stage never waits for a GPU: ``jobs`` alone says how many run). A stage of
several GPUs runs under torchrun, one process per device (:func:`torchrun`).
"""
import os
import sys
import threading
from collections import Counter
from typing import Dict, List, Optional


def visible_gpus(environ: Optional[Dict[str, str]] = None) -> List[str]:
    """The GPUs a process started with ``environ`` sees, named as ``CUDA_VISIBLE_DEVICES`` takes them: that
    variable's list when it is set ('' or '-1': none), else ``0 .. n-1`` for the n GPUs of this machine.

    Counting them starts no CUDA context here (torch reads NVML where it can); it would not matter if it did: the
    pipeline starts its stages with fork + exec, and the preload server, which forks, is not started where there
    are GPUs (run.py)."""
    environ = os.environ if environ is None else environ
    listed = environ.get('CUDA_VISIBLE_DEVICES')
    if listed is not None:
        listed = listed.strip()
        return [] if listed in ('', '-1') else [d.strip() for d in listed.split(',') if d.strip()]
    try:
        import torch
    except ImportError:
        return []
    return [str(i) for i in range(torch.cuda.device_count())]


class GpuError(ValueError):
    """A GPU request this machine cannot meet (``--gpus-per-stage`` above the GPUs it has)."""


class GpuPool:
    """Hands out ``per_stage`` of ``gpus`` to each stage that starts, the least used first (ties: in order)."""

    def __init__(self, gpus: List[str], per_stage: int = 1):
        if per_stage < 1:
            raise GpuError(f'--gpus-per-stage must be >= 1, got {per_stage}')
        if per_stage > 1 and len(gpus) < per_stage:
            shown = f'{len(gpus)} GPU{"" if len(gpus) == 1 else "s"}' + (f' ({",".join(gpus)})' if gpus else '')
            raise GpuError(f'--gpus-per-stage {per_stage}: this machine shows the pipeline {shown}; ask for at most '
                           f'{max(1, len(gpus))} (CUDA_VISIBLE_DEVICES chooses which it shows)')
        self.gpus, self.per_stage = list(gpus), per_stage
        self._held = Counter()
        self._lock = threading.Lock()

    def take(self) -> List[str]:
        """The devices of a stage that starts now; [] where there are no GPUs."""
        with self._lock:
            order = sorted(self.gpus, key=lambda d: (self._held[d], self.gpus.index(d)))
            taken = order[:self.per_stage]
            self._held.update(taken)
            return taken

    def give_back(self, devices: List[str]) -> None:
        with self._lock:
            self._held.subtract(devices)


def torchrun(processes: int) -> List[str]:
    """torchrun for one stage of ``processes`` GPUs on this machine: ``--standalone`` picks a free port, so that
    stages side by side do not meet at one rendezvous."""
    return [sys.executable, '-m', 'torch.distributed.run', '--standalone', f'--nproc_per_node={processes}']
