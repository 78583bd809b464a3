"""Checkpoint I/O policy: mmengine checkpoints that load safely on torch >= 2.6, and atomic writes.

torch >= 2.6 loads with ``weights_only=True``, which rejects what mmengine 0.10.7 pickles into every Runner
checkpoint (numpy scalars/arrays in the message hub, and ``HistoryBuffer`` objects whose default pickle
goes through ``getattr`` — allowing that would make the safe unpickler unsafe). Rather than switch
``weights_only`` off (which would also trust any third-party file), we

* allow-list the numpy data types and ``HistoryBuffer`` (plain data classes), and
* make ``HistoryBuffer`` pickle through its constructor, so checkpoints written from now on contain no
  ``getattr`` and load under ``weights_only=True``.

Checkpoints are written atomically: mmengine writes every local file through ``LocalBackend.put``; ours
writes through :func:`vitbench.fileio.atomic_open`, so a killed run never leaves a half-written ``.pth``
behind, and an old checkpoint that ``max_keep_ckpts`` retires is removed only after its successor is written.
(The ``last_checkpoint`` pointer is not covered: mmengine's CheckpointHook writes it with a plain
``open``; an empty or dangling pointer makes ``--resume`` stop with one line, see ``vitbench.engine.run_state``.)

Nothing happens on import: :func:`install_checkpoint_policy` applies it, called once by each entry point.
"""
import copyreg
import os
import os.path as osp
from typing import Dict, List

import numpy as np
import torch
from mmengine.fileio import LocalBackend, register_backend
from mmengine.logging import HistoryBuffer

from vitbench.fileio import atomic_write_bytes, atomic_write_text

try:  # numpy >= 2
    from numpy._core import multiarray as _np_multiarray
except ImportError:  # pragma: no cover - numpy 1.x
    from numpy.core import multiarray as _np_multiarray


def _numpy_safe_globals():
    dtype_classes = [type(np.dtype(t)) for t in np.sctypeDict.values()]
    return [np.dtype, np.ndarray, _np_multiarray.scalar, _np_multiarray._reconstruct, *set(dtype_classes)]


def _reduce_history_buffer(buffer: HistoryBuffer):
    # HistoryBuffer(log_history, count_history, max_length) rebuilds it exactly.
    return HistoryBuffer, (buffer._log_history, buffer._count_history, buffer.max_length)


# folder -> checkpoints whose removal waits for the next checkpoint written there (module-level: mmengine makes
# a new backend object per get_file_backend call, so the remove and the next put reach different instances)
_PENDING_REMOVALS: Dict[str, List[str]] = {}


def _folder(filepath) -> str:
    return osp.dirname(osp.abspath(str(filepath)))


class AtomicLocalBackend(LocalBackend):
    """mmengine's local file backend with all-or-nothing writes, and checkpoint removals that wait for the
    checkpoint replacing them: with ``max_keep_ckpts``, mmengine's CheckpointHook removes the oldest kept
    checkpoint *before* writing the new one, so a run killed during that write would be left with none."""

    def put(self, obj: bytes, filepath) -> None:
        atomic_write_bytes(obj, str(filepath))
        if str(filepath).endswith('.pth'):
            for old in _PENDING_REMOVALS.pop(_folder(filepath), []):
                if osp.abspath(old) != osp.abspath(str(filepath)) and osp.isfile(old):
                    os.remove(old)

    def put_text(self, obj: str, filepath, encoding: str = 'utf-8') -> None:
        atomic_write_text(obj, str(filepath), encoding)

    def remove(self, filepath) -> None:
        if str(filepath).endswith('.pth'):  # a checkpoint: removed once the next one in its folder is whole
            _PENDING_REMOVALS.setdefault(_folder(filepath), []).append(str(filepath))
        else:
            super().remove(filepath)


def install_checkpoint_policy() -> None:
    """Apply the policy to this process (idempotent). The entry points call it: ``build_runner`` of
    ``vitbench.experiment.cli`` (tools/train.py, tools/test.py, any script that builds a Runner through it) and
    the tools that read checkpoints; a script of your own that ``torch.load`` s runner checkpoints calls it too."""
    torch.serialization.add_safe_globals([*_numpy_safe_globals(), HistoryBuffer])
    copyreg.pickle(HistoryBuffer, _reduce_history_buffer)
    register_backend('local', AtomicLocalBackend, force=True, prefixes='')
