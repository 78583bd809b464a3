"""Checkpoint I/O policy: mmengine checkpoints that load safely on torch >= 2.6, and atomic writes.

torch >= 2.6 loads with ``weights_only=True``, which rejects what mmengine 0.10.7 pickles into every Runner
checkpoint (numpy scalars/arrays in the message hub, and ``HistoryBuffer`` objects whose default pickle
goes through ``getattr`` — allowing that would make the safe unpickler unsafe). Rather than switch
``weights_only`` off (which would also trust any third-party file), we

* allow-list the numpy data types and ``HistoryBuffer`` (plain data classes), and
* make ``HistoryBuffer`` pickle through its constructor, so checkpoints written from now on contain no
  ``getattr`` and load under ``weights_only=True``.

Checkpoints are written atomically: mmengine writes every local file through ``LocalBackend.put``; ours
writes to a temporary file in the same folder, fsyncs it and renames it over the target, so a killed run
never leaves a half-written ``.pth`` (or ``last_checkpoint`` pointer) behind.

Everything here is applied on import of this module, which ``vitbench.registry`` and the tools do.
"""
import copyreg
import io
import os
import os.path as osp
import tempfile

import numpy as np
import torch
from mmengine.fileio import LocalBackend, register_backend
from mmengine.logging import HistoryBuffer

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


_UMASK = os.umask(0)
os.umask(_UMASK)


class AtomicLocalBackend(LocalBackend):
    """mmengine's local file backend with all-or-nothing writes."""

    def put(self, obj: bytes, filepath) -> None:
        _atomic_write(obj, str(filepath))

    def put_text(self, obj: str, filepath, encoding: str = 'utf-8') -> None:
        _atomic_write(obj.encode(encoding), str(filepath))


def _atomic_write(data: bytes, filepath: str) -> None:
    folder = osp.dirname(osp.abspath(filepath))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f'.{osp.basename(filepath)}.', suffix='.tmp')
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, filepath)
    except BaseException:
        if osp.exists(tmp):
            os.remove(tmp)
        raise


def atomic_write_text(text: str, filepath: str) -> None:
    _atomic_write(text.encode('utf-8'), filepath)


def atomic_torch_save(obj, filepath: str) -> None:
    """``torch.save`` that never leaves a partial file (for files written outside mmengine's backend)."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    _atomic_write(buffer.getvalue(), filepath)


def _install() -> None:
    torch.serialization.add_safe_globals([*_numpy_safe_globals(), HistoryBuffer])
    copyreg.pickle(HistoryBuffer, _reduce_history_buffer)
    register_backend('local', AtomicLocalBackend, force=True, prefixes='')


_install()
