"""What a run costs: wall time, the devices it holds, their peak memory and the training throughput.

One :class:`RunMeter` per Runner (:func:`meter_of`), so every hook that reports cost reads the same clock:
``ResultRecorderHook`` drives it (``result.json``'s ``cost``) and ``BackboneExportHook`` stores the device-hours
it has measured in ``backbone.pth``. Measuring is cheap and needs no communication between ranks: one clock read
at each end, the length of each training batch (images = this rank's count x world size), and the peak memory
of rank 0.

A resumed run costs what all its processes cost: the totals so far travel in every runner checkpoint
(``meta['vitbench_cost']``) and a run that resumes from one continues from them.
"""
import sys
import time
import weakref
from typing import Optional

import torch

from .cpu import cpu_name

CHECKPOINT_KEY = 'vitbench_cost'  # in a runner checkpoint's ``meta``: the totals of the processes so far
# Kept off the runner itself: an attribute or message-hub entry would be pickled into checkpoints.
_METERS = weakref.WeakKeyDictionary()


def meter_of(runner) -> 'RunMeter':
    """The meter of ``runner``, made on first use."""
    if runner not in _METERS:
        _METERS[runner] = RunMeter()
    return _METERS[runner]


def batch_size(data_batch) -> int:
    """Samples in a batch as mmengine's collate functions yield it: a dict whose ``inputs`` are a list
    (pseudo_collate) or a stacked tensor (default_collate), or a bare tensor or list."""
    if isinstance(data_batch, dict):
        data_batch = data_batch.get('inputs', next(iter(data_batch.values()), ()))
    if isinstance(data_batch, torch.Tensor):
        return int(data_batch.shape[0]) if data_batch.dim() else 1
    return len(data_batch) if isinstance(data_batch, (list, tuple)) else 0


def _cpu(world_size: int = 1) -> dict:
    # threads: every process's torch threads (torchrun gives each process one unless OMP_NUM_THREADS says more)
    return dict(kind='cpu', name=cpu_name(), count=1, world_size=world_size,
                threads=torch.get_num_threads() * world_size)


def device_of(runner) -> dict:
    """``{kind, name, count, world_size, threads}`` of the devices the run's model is on: a CPU counts once however
    many processes share it (``world_size`` says how many; ``threads`` is their torch threads together); GPUs
    count once per rank."""
    world_size = int(getattr(runner, 'world_size', 1))
    param = next(iter(runner.model.parameters()), None)
    device = param.device if param is not None else torch.device('cpu')
    if device.type == 'cpu':
        return _cpu(world_size)
    name = torch.cuda.get_device_name(device) if device.type == 'cuda' else device.type
    return dict(kind=device.type, name=name, count=world_size, world_size=world_size, threads=None)


def precision_of(runner) -> Optional[str]:
    """'bf16' / 'fp16' when the run trains under autocast, 'fp32' otherwise, None for a run that does not train:
    a number measured in bfloat16 on one machine and float32 on another should say so."""
    wrapper = getattr(runner, 'optim_wrapper', None)
    if wrapper is None or isinstance(wrapper, dict):
        return None
    if not hasattr(wrapper, 'cast_dtype'):  # mmengine's AmpOptimWrapper and ours (vitbench.engine.amp) have one
        return 'fp32'
    dtype = wrapper.cast_dtype  # None: autocast's default, float16 on a GPU (mmengine's AmpOptimWrapper)
    return {torch.bfloat16: 'bf16', torch.float32: 'fp32', torch.float64: 'fp32'}.get(dtype, 'fp16')


def peak_mem_MB(kind: str) -> Optional[float]:
    """Peak memory of this process in MiB: CUDA memory allocated by torch on a GPU, else the maximum resident
    set size. None where the platform cannot say."""
    try:
        if kind == 'cuda':
            return torch.cuda.max_memory_allocated() / 2**20
        import resource  # POSIX only
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return rss / 2**20 if sys.platform == 'darwin' else rss / 2**10  # bytes on macOS, KiB on Linux
    except Exception:  # noqa: BLE001 - a cost that cannot be measured must not cost the run its record
        return None


class RunMeter:
    """Wall time from :meth:`start` to :meth:`stop` and the training images counted between them, added to
    the totals of the earlier processes of a resumed run (:meth:`saving`, :meth:`loaded`,
    :meth:`resume_if_resumed`)."""

    def __init__(self):
        self._start: Optional[float] = None
        self._stop: Optional[float] = None
        self._images = 0  # training samples this rank has seen in this process
        self._device: Optional[dict] = None
        self._loaded: Optional[dict] = None  # the totals a loaded checkpoint carries, applied if it is resumed
        self._earlier = dict(wall_s=0.0, device_hours=0.0, images=0, peak_mem_MB=0.0)
        self.compiled: Optional[str] = None  # what tools/train.py --compile compiled ('train_step', 'backbone')

    def start(self) -> None:
        """The first call starts the clock (each hook that reports cost calls it, in any order)."""
        if self._start is None:
            self._start = time.perf_counter()

    def stop(self) -> None:
        if self._start is not None and self._stop is None:
            self._stop = time.perf_counter()

    def count(self, data_batch) -> None:
        self._images += batch_size(data_batch)

    def device(self, runner) -> dict:
        if self._device is None:
            try:
                self._device = device_of(runner)
            except Exception:  # noqa: BLE001 - e.g. a model without parameters; the record still gets written
                self._device = _cpu(int(getattr(runner, 'world_size', 1)))
        return self._device

    def totals(self, runner) -> dict:
        """``{wall_s, device_hours, images, peak_mem_MB}`` of the run so far, all its processes included; what
        runner checkpoints carry."""
        wall_s = 0.0 if self._start is None else (self._stop or time.perf_counter()) - self._start
        device = self.device(runner)
        peak = max(self._earlier['peak_mem_MB'], peak_mem_MB(device['kind']) or 0.0)
        return dict(wall_s=self._earlier['wall_s'] + wall_s,
                    device_hours=self._earlier['device_hours'] + wall_s * device['count'] / 3600,
                    images=self._earlier['images'] + self._images * int(runner.world_size),
                    peak_mem_MB=peak or None)

    def saving(self, runner, checkpoint: dict) -> None:
        """A runner checkpoint is being saved: it carries the totals so far."""
        checkpoint.setdefault('meta', {})[CHECKPOINT_KEY] = self.totals(runner)

    def loaded(self, checkpoint: dict) -> None:
        """A runner checkpoint was loaded: keep its totals, for the case that the run resumes from it."""
        totals = (checkpoint.get('meta') or {}).get(CHECKPOINT_KEY)
        self._loaded = totals if isinstance(totals, dict) else None

    def resume_if_resumed(self, runner) -> None:
        """At the start of training: continue from the loaded checkpoint's totals if the run resumed from it
        (it starts past iteration 0). A run that only loads weights (``load_from``) or tests starts afresh."""
        if self._loaded and runner.iter > 0:
            loaded = self._loaded
            self._earlier = {k: float(loaded[k]) if isinstance(loaded.get(k), (int, float)) else 0.0
                             for k in self._earlier}
        self._loaded = None

    def cost(self, runner, training: bool) -> dict:
        """The run's own ``cost`` in result.json (the recorder adds the pre-training behind its weights)."""
        totals = self.totals(runner)
        wall_s = totals['wall_s']
        config = getattr(runner, 'cfg', None) or {}
        compiled = self.compiled or ('train_step' if config.get('compile') else None)  # the config's own key
        return dict(wall_s=wall_s, device=self.device(runner), precision=precision_of(runner) if training else None,
                    compiled=compiled if training else None,
                    device_hours=totals['device_hours'],
                    peak_mem_MB=totals['peak_mem_MB'],
                    images_per_s=totals['images'] / wall_s if training and wall_s > 0 else None)
