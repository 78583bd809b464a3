"""``RunStateHook``: a training run owns its work dir, and a killed run resumes into the run that never stopped.

* **One training per work dir.** Training takes ``WORK_DIR/run.lock`` (:class:`vitbench.fileio.FolderLock`,
  holding its pid and host) before it loads or saves a checkpoint there; a second training in that dir stops
  with exit status 2 and one line naming the first. The kernel frees the lock when its holder dies, however it
  dies. A test (tools/test.py) locks its own folder, ``WORK_DIR/eval/<checkpoint>``: evaluating a checkpoint of a
  running training is fine.
* **No unfinished writes.** With the lock held nobody else writes there, so every ``.NAME.XXXXXXXX.tmp`` the
  atomic writer left when a process was killed mid-write is stale: removed, each with a line in the log. A
  ``--resume`` that finds no checkpoint says so (it starts from the beginning); a ``last_checkpoint`` that names
  a missing file (or nothing: mmengine writes it in place) stops the run with exit status 2, naming both.
* **Exact resume.** Runner checkpoints carry the random states of the process (Python, NumPy, torch, CUDA) in
  ``meta['vitbench_rng']``, and those of persistent dataloader workers in an epoch-based loop. A resumed run puts
  them back at the point where the uninterrupted run stood when it saved: before the first batch it fetches,
  i.e. after mmengine has skipped the batches an iteration-based loop already trained (that skip replays them
  through the workers, so the workers' own streams come back by themselves). Validation runs on a copy of the
  states, so that whether a run validated before its checkpoint or, resumed, did not, training draws the same
  numbers. The samplers need nothing: their order is a function of the seed and the epoch, both restored.
  Single-process runs only: only rank 0 saves, so the other ranks' states are not in the checkpoint.
"""
import glob
import os.path as osp
import pickle
import random
import sys
from typing import Dict, Optional

import numpy as np
import torch
from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop, IterBasedTrainLoop
from torch.utils.data import get_worker_info

from vitbench.compat.mmengine import built_train_loop, resumes_from_latest, wrap_iter_loop_batches
from vitbench.engine.checkpoint_integrity import read_pointer
from vitbench.fileio import RUN_LOCK, FolderInUse, FolderLock, remove_unfinished_writes
from vitbench.registry import HOOKS

CHECKPOINT_KEY = 'vitbench_rng'  # in a runner checkpoint's ``meta``: {'process': state, 'workers': {id: state}}
_SLOT_BYTES = 1 << 16  # a worker's pickled states (~12 kB) and their length


def rng_state() -> dict:
    """Every global random state of this process, in types that load under ``torch.load(weights_only=True)``."""
    state = dict(python=random.getstate(), numpy=np.random.get_state(), torch=torch.get_rng_state())
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state['cuda'] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    random.setstate(state['python'])
    np.random.set_state(state['numpy'])
    torch.set_rng_state(state['torch'].cpu())  # a resumed checkpoint is mapped to the run's device
    if 'cuda' in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s.cpu() for s in state['cuda']])


class _WorkerStates:
    """The random states of a DataLoader's persistent workers, each as of its last batch: a worker writes them
    into its slot of shared memory after collating a batch, the main process reads them when it saves. Its
    collate and worker-init wrappers are picklable, for a loader whose workers are spawned."""

    def __init__(self, num_workers: int):
        self.slots = torch.zeros(num_workers, _SLOT_BYTES, dtype=torch.uint8).share_memory_()

    def read(self) -> Dict[int, dict]:
        states = {}
        for worker, slot in enumerate(self.slots):
            size = int.from_bytes(slot[:8].numpy().tobytes(), 'little')
            if size:  # a worker that has not loaded a batch yet still has the state it started with
                states[worker] = pickle.loads(slot[8:8 + size].numpy().tobytes())
        return states

    def install(self, loader, restored: Optional[Dict[int, dict]]) -> None:
        loader.collate_fn = _RecordingCollate(loader.collate_fn, self.slots)
        if restored:
            loader.worker_init_fn = _RestoringInit(loader.worker_init_fn, restored)


class _RecordingCollate:
    def __init__(self, collate_fn, slots):
        self.collate_fn, self.slots = collate_fn, slots

    def __call__(self, samples):
        batch = self.collate_fn(samples)
        info = get_worker_info()
        if info is not None:
            data = pickle.dumps(rng_state())
            slot = self.slots[info.id]
            slot[8:8 + len(data)] = torch.frombuffer(bytearray(data), dtype=torch.uint8)
            slot[:8] = torch.frombuffer(bytearray(len(data).to_bytes(8, 'little')), dtype=torch.uint8)
        return batch


class _RestoringInit:
    def __init__(self, init_fn, states: Dict[int, dict]):
        self.init_fn, self.states = init_fn, states

    def __call__(self, worker_id: int) -> None:
        if self.init_fn is not None:
            self.init_fn(worker_id)  # mmengine's seeding (and whatever else it does), then the saved state
        if worker_id in self.states:
            set_rng_state(self.states[worker_id])


class _RestoreBeforeFetch:
    """An iteration-based loop's data iterator that puts the saved states back once mmengine's skip over the
    batches already trained is done, just before the first new batch is fetched."""

    def __init__(self, iterator, skip: int, restore):
        self.iterator, self.skip, self.restore = iterator, skip, restore

    def __iter__(self):
        return self

    def __next__(self):
        if self.skip == 0 and self.restore is not None:
            self.restore()
            self.restore = None
        self.skip -= 1
        return next(self.iterator)

    def __getattr__(self, name):
        return getattr(self.iterator, name)


def _refuse(message: str) -> None:
    # What tools/*.py do with a wrong input: one line on stderr, exit status 2, before any checkpoint is touched.
    print(f'error: {message}', file=sys.stderr)
    raise SystemExit(2)


def training_done(runner) -> bool:
    """The training loop has nothing left to run: a run resumed from the checkpoint of its last iteration."""
    loop = runner.train_loop
    return runner.epoch >= loop.max_epochs if isinstance(loop, EpochBasedTrainLoop) else runner.iter >= loop.max_iters


def _is_training(runner) -> bool:
    # Runner.train() builds its loop before before_run; test() and val() leave the train loop a config.
    return built_train_loop(runner) is not None


@HOOKS.register_module()
class RunStateHook(Hook):
    """Added to every run by ``build_runner`` (``harness/experiment/cli.py``)."""

    priority = 'HIGHEST'  # restores before any other hook of the epoch draws a number

    def __init__(self):
        self._lock: Optional[FolderLock] = None
        self._loaded = None  # (iteration, states) of the checkpoint loaded last
        self._pending = None  # the states a resumed epoch-based run puts back before its next epoch
        self._workers: Optional[_WorkerStates] = None
        self._outside_val = None

    # ------------------------------------------------------------------------------- the work dir

    def before_run(self, runner) -> None:
        if runner.rank != 0:
            return
        # a test takes the lock of its own folder (WORK_DIR/eval/<checkpoint>): two tests of one checkpoint there
        # would write one record
        self._lock = FolderLock(runner.work_dir, RUN_LOCK)
        try:
            dead = self._lock.acquire()
        except FolderInUse as e:
            self._lock = None
            _refuse(f'another training runs here: {e}; wait for it to end, or stop it' if _is_training(runner) else
                    f'a run works here: {e}; test when it has ended (it writes result.json here too), or give '
                    'another --work-dir')
        if dead:
            runner.logger.warning(f'took over {self._lock.path} from {dead}, which is no longer running')
        if not _is_training(runner):
            return
        for name in remove_unfinished_writes(runner.work_dir):
            runner.logger.warning(f'removed an unfinished write of a killed process: {name}')
        if resumes_from_latest(runner):  # --resume without a path: mmengine's pointer
            self._check_pointer(runner)

    @staticmethod
    def _check_pointer(runner) -> None:
        latest = read_pointer(runner.work_dir)  # relative to the work dir (a copied dir names its own files)
        if latest is None:
            runner.logger.warning(f'--resume: no checkpoint to resume from in {runner.work_dir} (none was '
                                  'completed): training starts from the beginning')
        elif not osp.isfile(latest):
            pointer = osp.join(runner.work_dir, 'last_checkpoint')
            there = ', '.join(sorted(osp.basename(p) for p in glob.glob(osp.join(runner.work_dir, '*.pth'))))
            what = f'names {latest}, which does not exist' if latest else 'is empty (a process died writing it)'
            _refuse(f'--resume: {pointer} {what} (.pth files there: {there or "none"}); resume from one of them '
                    'with --resume PATH, or delete last_checkpoint to start over')

    def after_run(self, runner) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------------------------- random states

    def before_save_checkpoint(self, runner, checkpoint) -> None:
        states = dict(process=self._outside_val or rng_state())  # a best checkpoint is saved during validation
        if self._workers is not None:
            states['workers'] = self._workers.read()
        checkpoint.setdefault('meta', {})[CHECKPOINT_KEY] = states

    def after_load_checkpoint(self, runner, checkpoint) -> None:
        meta = checkpoint.get('meta') or {}
        self._loaded = (meta.get('iter'), meta.get(CHECKPOINT_KEY))

    def before_train(self, runner) -> None:
        loop, loader = runner.train_loop, runner.train_dataloader
        iteration, states = self._loaded or (None, None)
        resumed = bool(loop.iter) and iteration == loop.iter  # else a fresh run, or load_from weights only
        self._loaded = None
        if runner.world_size > 1:
            if resumed:
                runner.logger.warning('resumed without the random states: distributed runs do not save them')
            return
        persistent = loader.num_workers > 0 and loader.persistent_workers
        if persistent and not isinstance(loop, IterBasedTrainLoop):  # its workers run before any hook
            self._workers = _WorkerStates(loader.num_workers)
            self._workers.install(loader, states.get('workers') if resumed and states else None)
            if resumed:
                # The first iterator of a persistent loader draws its workers' base seed from torch's global
                # generator; the uninterrupted run drew it in its first epoch, before the checkpoint.
                loader.generator = torch.Generator()
        if not resumed:
            return
        if states is None:
            runner.logger.warning('resumed from a checkpoint without random states (written by an older '
                                  'vitbench): the run goes on, but not exactly as one that never stopped would')
            return

        def restore():
            set_rng_state(states['process'])
            runner.logger.info(f'random states restored as they were at iteration {iteration}')

        if training_done(runner):  # nothing is fetched any more: the last validation and the export draw from them
            restore()
        elif isinstance(loop, IterBasedTrainLoop):
            wrap_iter_loop_batches(loop, lambda batches: _RestoreBeforeFetch(batches, loop.iter, restore))
        else:
            self._pending = restore

    def before_train_epoch(self, runner) -> None:
        if self._pending is not None:
            self._pending()
            self._pending = None

    def before_val(self, runner) -> None:
        self._outside_val = rng_state()

    def after_val(self, runner) -> None:
        if self._outside_val is not None:
            set_rng_state(self._outside_val)
            self._outside_val = None
