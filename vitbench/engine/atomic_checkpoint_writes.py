"""mmengine's local writes, checkpoints included, all-or-nothing.

mmengine writes every local file through ``LocalBackend.put``; the backend :func:`install_atomic_writes`
registers writes through :func:`vitbench.fileio.atomic_open`, so a killed run never leaves a half-written ``.pth``
behind, and an old checkpoint that ``max_keep_ckpts`` retires is removed only after its successor is written.
Each ``.pth`` gets its sha256 beside it (``NAME.pth.sha256``, ``vitbench.engine.checkpoint_integrity``), checked
before any load. (The ``last_checkpoint`` pointer is written by ``vitbench.VerifiedCheckpointHook``, relative to the
work dir; an empty or dangling pointer makes ``--resume`` stop with one line, see ``vitbench.engine.run_state``.)
"""
import os
import os.path as osp
from typing import Dict, List

from mmengine.fileio import LocalBackend, register_backend

from vitbench.fileio import atomic_write_bytes, atomic_write_text

from .checkpoint_integrity import digest_path, write_digest

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
            write_digest(str(filepath), obj)  # after the checkpoint: a hash never vouches for a file not yet whole
            for old in _PENDING_REMOVALS.pop(_folder(filepath), []):
                if osp.abspath(old) != osp.abspath(str(filepath)) and osp.isfile(old):
                    os.remove(old)
                    if osp.isfile(digest_path(old)):
                        os.remove(digest_path(old))

    def put_text(self, obj: str, filepath, encoding: str = 'utf-8') -> None:
        atomic_write_text(obj, str(filepath), encoding)

    def remove(self, filepath) -> None:
        if str(filepath).endswith('.pth'):  # a checkpoint: removed once the next one in its folder is whole
            _PENDING_REMOVALS.setdefault(_folder(filepath), []).append(str(filepath))
        else:
            super().remove(filepath)


def install_atomic_writes() -> None:
    """Apply it to this process (idempotent): every local path mmengine writes goes through the backend."""
    register_backend('local', AtomicLocalBackend, force=True, prefixes='')
