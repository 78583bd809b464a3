"""The one atomic writer: every file the suite writes (checkpoints, backbone.pth, result.json, leaderboards,
demo-data manifests) either appears whole or not at all.

A file is written to a temporary sibling, flushed to disk (fsync) and renamed over its target, so a run killed
mid-write never leaves a truncated file where a reader (``--resume``, the leaderboard, the pipeline) would
take it for a complete one. Torch-free, so the leaderboard and the pipeline can use it without importing torch.
"""
import contextlib
import os
import os.path as osp
import tempfile
from typing import BinaryIO, Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_open(path: str) -> Iterator[BinaryIO]:
    """``with atomic_open(path) as f: f.write(...)``: a binary file that replaces ``path`` only when the block
    ends without an exception. The temporary file is hidden (``.name.XXXX.tmp``) and removed on failure."""
    path = os.fspath(path)
    folder = osp.dirname(osp.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f'.{osp.basename(path)}.', suffix='.tmp')
    try:
        with os.fdopen(fd, 'wb') as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException:
        if osp.exists(tmp):
            os.remove(tmp)
        raise


def atomic_write_bytes(data: bytes, path: str) -> None:
    with atomic_open(path) as f:
        f.write(data)


def atomic_write_text(text: str, path: str, encoding: str = 'utf-8') -> None:
    atomic_write_bytes(text.encode(encoding), path)
