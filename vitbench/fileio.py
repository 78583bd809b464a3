"""The one atomic writer: every file the suite writes (checkpoints, backbone.pth, result.json, leaderboards,
demo-data manifests) either appears whole or not at all.

A file is written to a temporary sibling, flushed to disk (fsync) and renamed over its target, so a run killed
mid-write never leaves a truncated file where a reader (``--resume``, the leaderboard, the pipeline) would
take it for a complete one. What such a kill leaves behind is the hidden temporary: :func:`remove_unfinished_writes`
clears those from a folder once its :class:`FolderLock` shows that no live process writes there. Torch-free,
so the leaderboard and the pipeline can use it without importing torch.
"""
import contextlib
import datetime
import errno
import fcntl
import os
import os.path as osp
import re
import shutil
import socket
import tempfile
from typing import BinaryIO, Dict, Iterator, List, Optional

_UMASK = os.umask(0)
os.umask(_UMASK)
_TMP_SUFFIX = '.tmp'
_UNFINISHED = re.compile(r'^\..+\.[a-z0-9_]{8}' + re.escape(_TMP_SUFFIX) + '$')  # mkstemp's 8 random characters


class WriteError(OSError):
    """A file that could not be written whole (disk full, quota, I/O error): the message names the file, how much
    of it was written and what is free there."""


_WRITE_FAILURES = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


def _write_failure(error: BaseException) -> Optional[OSError]:
    """The OSError of a failed write behind ``error``: itself, or what torch.save's RuntimeError ('[enforce fail at
    inline_container.cc] unexpected pos') swallowed from the file object (its ``__context__``)."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in _WRITE_FAILURES:
            return error
        error = error.__cause__ or error.__context__
    return None


@contextlib.contextmanager
def atomic_open(path: str) -> Iterator[BinaryIO]:
    """``with atomic_open(path) as f: f.write(...)``: a binary file that replaces ``path`` only when the block
    ends without an exception. The temporary file is hidden (``.name.XXXX.tmp``) and removed on failure; a write
    that fails for want of space (or an I/O error) raises :class:`WriteError` naming ``path``."""
    path = os.fspath(path)
    folder = osp.dirname(osp.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f'.{osp.basename(path)}.', suffix=_TMP_SUFFIX)
    try:
        with os.fdopen(fd, 'wb') as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except BaseException as e:
        written = osp.getsize(tmp) if osp.exists(tmp) else 0
        if osp.exists(tmp):
            os.remove(tmp)
        failure = _write_failure(e)
        if failure is None:
            raise
        free = shutil.disk_usage(folder).free
        raise WriteError(failure.errno, f'{path} could not be written: {failure.strerror} ({written} bytes written '
                         f'when it failed, {free} bytes free in {folder} now); free space or write elsewhere '
                         '(--work-dir), then run again (--resume continues a training)') from e


def atomic_write_bytes(data: bytes, path: str) -> None:
    with atomic_open(path) as f:
        f.write(data)


def atomic_write_text(text: str, path: str, encoding: str = 'utf-8') -> None:
    atomic_write_bytes(text.encode(encoding), path)


def remove_unfinished_writes(folder: str) -> List[str]:
    """Remove the temporaries that writers killed mid-write left in ``folder`` (``.NAME.XXXXXXXX.tmp``); returns
    their names. Only for a folder no live process writes to: a live writer's temporary looks the same."""
    names = sorted(n for n in os.listdir(folder) if _UNFINISHED.match(n)) if osp.isdir(folder) else []
    for name in names:
        os.remove(osp.join(folder, name))
    return names


RUN_LOCK = 'run.lock'  # a training's lock in its work dir (vitbench/engine/run_state.py), probed by the pipeline


class FolderInUse(RuntimeError):
    """Another live process holds the folder's lock; the message names it (pid and host)."""


class FolderLock:
    """One live owner for a folder: a POSIX lock (``fcntl.lockf``) on ``FOLDER/NAME``, a file naming its holder.

    The kernel drops the lock when its holder exits, however it exits (kill -9 included), so a lock never outlives
    its process; the file's text does, and tells a successor whose lock it takes over. A POSIX lock belongs to
    the process: the dataloader workers a trainer forks do not hold it (they would hold a ``flock``, and keep a
    killed trainer's work dir locked until they notice). Closing any descriptor of the file drops the process's
    lock, so this class never opens the file again while it holds it. Within a process a second ``acquire`` of one
    path replaces the first holder (a run that raised and never released)."""

    _held: Dict[str, 'FolderLock'] = {}

    def __init__(self, folder: str, name: str):
        self.path = osp.realpath(osp.join(folder, name))
        self._file = None
        self._text = ''

    def acquire(self) -> Optional[str]:
        """Take the lock, or raise :class:`FolderInUse`; returns the text of a dead holder taken over, else None."""
        previous = self._held.pop(self.path, None)
        if previous is not None:
            previous.release()
        os.makedirs(osp.dirname(self.path), exist_ok=True)
        f = open(self.path, 'a+', encoding='utf-8')  # never truncated on open: a live holder's text stays
        try:
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except (BlockingIOError, PermissionError):
            f.seek(0)
            holder = f.read().strip() or 'another process'
            f.close()
            raise FolderInUse(f'{osp.dirname(self.path)} is in use by {holder} ({self.path})') from None
        f.seek(0)
        dead = f.read().strip() or None  # a holder that exited releases and empties the file: this one did not
        self._text = (f'pid {os.getpid()} on {socket.gethostname()} since '
                      f'{datetime.datetime.now().isoformat(sep=" ", timespec="seconds")}')
        f.truncate(0)
        f.write(self._text + '\n')
        f.flush()
        self._file, self._held[self.path] = f, self
        return dead

    def release(self) -> None:
        if self._file is None:
            return
        self._file.truncate(0)  # nobody holds it: the next holder has no one to take over from
        self._file.close()  # closing drops the lock
        self._file = None
        if self._held.get(self.path) is self:
            del self._held[self.path]

    def holder(self) -> Optional[str]:
        """Who holds the lock now (its text), None if nobody does; takes nothing."""
        if self.path in self._held:  # this process: opening the file again would drop its lock
            return self._held[self.path]._text
        if not osp.isfile(self.path):
            return None
        with open(self.path, encoding='utf-8') as f:
            try:
                fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)  # released when the file closes
            except (BlockingIOError, PermissionError):
                return f.read().strip() or 'another process'
        return None
