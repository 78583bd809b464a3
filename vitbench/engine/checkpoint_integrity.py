"""Checkpoints checked before use, and the work dir's ``last_checkpoint`` pointer relative to the work dir.

* **A hash beside each checkpoint.** Every ``.pth`` mmengine writes through the atomic backend
  (``vitbench/engine/atomic_checkpoint_writes.py``) gets ``NAME.pth.sha256`` beside it, in ``sha256sum``'s format
  (``sha256sum -c NAME.pth.sha256`` checks it), computed from the bytes written, itself written atomically.
* **Checked before any load** (:func:`checkpoint_damage`): a checkpoint in torch's zip format must pass the
  archive's own CRC-32 of every member (``zipfile.ZipFile.testzip``), and a checkpoint with a hash beside it must
  match it. A few flipped bits in a weight leave finite values that load and train: only these checks see them.
* **Pointers relative to the work dir.** mmengine writes the absolute path of the latest checkpoint into
  ``WORK_DIR/last_checkpoint``; a copied work dir would resume the original's file. vitbench writes the name
  relative to the work dir (:func:`write_pointer`) and reads either kind as the work dir's own file
  (:func:`read_pointer`).
"""
import hashlib
import os
import os.path as osp
import re
import tempfile
import zipfile
from typing import List, Optional

DIGEST_SUFFIX = '.sha256'
POINTER = 'last_checkpoint'
_CHUNK = 1 << 22


def _replace_with_text(text: str, path: str) -> None:
    """``path`` replaced whole by ``text`` (a temporary file renamed over it). Not fsynced, unlike the checkpoints:
    a few bytes, and one lost to a power cut reads as absent (a hash file: the checkpoint is then checked by its
    CRCs alone; a pointer: --resume says so)."""
    fd, tmp = tempfile.mkstemp(dir=osp.dirname(osp.abspath(path)), prefix=f'.{osp.basename(path)}.', suffix='.tmp')
    try:
        with os.fdopen(fd, 'w') as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if osp.exists(tmp):
            os.remove(tmp)
        raise


def digest_path(checkpoint: str) -> str:
    return str(checkpoint) + DIGEST_SUFFIX


def write_digest(checkpoint: str, data: bytes) -> None:
    """``CHECKPOINT.sha256`` of the bytes just written as ``checkpoint`` (``sha256sum`` format, atomic)."""
    line = f'{hashlib.sha256(data).hexdigest()}  {osp.basename(str(checkpoint))}\n'
    _replace_with_text(line, digest_path(checkpoint))


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(_CHUNK), b''):
            digest.update(chunk)
    return digest.hexdigest()


def recorded_sha256(checkpoint: str) -> Optional[str]:
    """The hash written beside ``checkpoint`` at save; None when there is none (a file from elsewhere, or older)."""
    try:
        with open(digest_path(checkpoint)) as f:
            words = f.read().split()
    except OSError:
        return None
    if not words:
        return None  # emptied by a power cut after its rename: as if absent
    return words[0].lower() if re.fullmatch(r'[0-9a-fA-F]{64}', words[0]) else ''


def checkpoint_damage(path: str) -> Optional[str]:
    """Why ``path`` must not be loaded (its archive fails a CRC, or its bytes differ from the hash written beside
    it at save), in words that follow its name; None when it passes (a file in another format than torch's zip and
    without a hash beside it is not checked here: the loader refuses what it cannot read)."""
    if zipfile.is_zipfile(path):
        try:
            with zipfile.ZipFile(path) as archive:
                bad = archive.testzip()
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            return f'is a damaged archive ({e})'
        if bad is not None:
            return f"is damaged: its archive member '{bad}' fails its CRC check"
    expected = recorded_sha256(path)
    if expected is None:
        return None
    if expected == '':
        return f'has an unreadable hash file beside it ({osp.basename(digest_path(path))})'
    actual = sha256_of(path)
    if actual != expected:
        return (f'is damaged: its sha256 {actual[:16]}... differs from {expected[:16]}..., written beside it at save '
                f'({osp.basename(digest_path(path))})')
    return None


def write_pointer(work_dir: str, checkpoint: str) -> None:
    """``WORK_DIR/last_checkpoint``: ``checkpoint`` relative to the work dir when it lies there, atomically."""
    work_dir = osp.abspath(work_dir)
    checkpoint = osp.abspath(checkpoint)
    inside = osp.commonpath([work_dir, checkpoint]) == work_dir
    _replace_with_text(osp.relpath(checkpoint, work_dir) if inside else checkpoint, osp.join(work_dir, POINTER))


def read_pointer(work_dir: str) -> Optional[str]:
    """The checkpoint ``WORK_DIR/last_checkpoint`` names, as a path; None without a pointer, '' for an empty one.

    A relative name is the work dir's. An absolute one (mmengine's, or an older vitbench's) whose file name exists
    in this work dir is this work dir's file too: a work dir copied with ``cp -a run branch`` resumes branch's own
    checkpoint, never run's. Any other absolute path (a CheckpointHook ``out_dir``) is kept."""
    pointer = osp.join(work_dir, POINTER)
    if not osp.isfile(pointer):
        return None
    with open(pointer) as f:
        named = f.read().strip()
    if not named:
        return ''
    if not osp.isabs(named):
        return osp.join(work_dir, named)
    own = osp.join(work_dir, osp.basename(named))
    return own if osp.isfile(own) else named


_STEP = re.compile(r'^(epoch|iter)_(\d+)\.pth$')


def earlier_checkpoints(work_dir: str, damaged: str) -> List[str]:
    """The runner checkpoints of ``work_dir`` (``epoch_N.pth`` / ``iter_N.pth``) saved before ``damaged``, latest
    first: where a resume falls back to."""
    found = _STEP.match(osp.basename(damaged))
    names = []
    for name in (n for n in _listdir(work_dir) if _STEP.match(n)):
        kind, step = _STEP.match(name).groups()
        if found is None or (kind == found.group(1) and int(step) < int(found.group(2))):
            names.append((int(step), name))
    return [osp.join(work_dir, name) for _, name in sorted(names, reverse=True)]


def _listdir(folder: str) -> List[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []
