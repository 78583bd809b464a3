"""Writing demo datasets safely, and checking dataset folders.

A dataset is generated into a hidden sibling folder and renamed into place only once complete and
self-checked, so an interrupted run never leaves a half-written dataset behind. ``demo_data.json`` in
the output folder records the seed, scale and generator version of each dataset; re-running with the
same ones is a no-op, and anything else already there is reported, never overwritten or mixed.
"""
import fcntl
import json
import multiprocessing
import os
import shutil
import sys
import textwrap
import time
from functools import partial

from vitbench.fileio import atomic_write_text

from .base import SCALES, decode_problem, image_files

GENERATOR_VERSION = 3  # bump when the generated content changes, so stale demo data is reported
MANIFEST = 'demo_data.json'
MAX_SHOWN = 20  # problems listed per dataset; real datasets can have thousands of the same kind


def read_manifest(out):
    path = os.path.join(out, MANIFEST)
    if not os.path.isfile(path):
        return {}
    with open(path) as f:
        return json.load(f)


def write_manifest(out, manifest):
    atomic_write_text(json.dumps(manifest, indent=2, sort_keys=True) + '\n', os.path.join(out, MANIFEST))


def generate(datasets, out, seed=0, scale='small', workers=1, log=print):
    """Makes each of ``datasets`` under ``out`` unless already there; returns the error messages."""
    if scale not in SCALES:
        raise ValueError(f'unknown scale {scale!r}; expected one of {SCALES}')
    os.makedirs(out, exist_ok=True)
    want = dict(seed=seed, scale=scale, version=GENERATOR_VERSION)
    errors = []
    for ds in datasets:
        target = os.path.join(out, ds.folder)
        if os.path.exists(target):
            found = _existing(ds, out, want)
            errors += found
            if not found:
                log(f'{ds.name}: up to date ({target})')
            continue
        tmp = os.path.join(out, f'.{ds.folder}.partial')
        shutil.rmtree(tmp, ignore_errors=True)  # left by an interrupted run; the name is ours
        _build(ds, tmp, seed, scale, workers)
        # recorded before the rename: a crash in between only loses the folder. Read, update and write under a
        # lock: generators of other datasets may run at the same time (the demo pipeline does that).
        with open(os.path.join(out, '.demo_data.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            manifest = read_manifest(out)
            manifest[ds.name] = want
            write_manifest(out, manifest)
        os.rename(tmp, target)
    return errors


def _existing(ds, out, want):
    """Errors for a dataset folder that already exists: incomplete, or made with other settings."""
    target = os.path.join(out, ds.folder)
    problems = ds.check(os.path.join(out, ds.data_root))
    if problems:
        return [f'{ds.name}: {target} exists but is incomplete or malformed; left untouched. Remove it to '
                f'regenerate (rm -rf {target}).\n'
                + format_problems(ds, [f'{ds.data_root}/{p}' for p in problems])]
    have = read_manifest(out).get(ds.name)
    if have != want:
        settings = lambda d: ', '.join(f'{k}={d.get(k)}' for k in want)  # noqa: E731
        made = 'not by this tool' if have is None else f'with {settings(have)}'
        return [f'{ds.name}: {target} was made {made}, but {settings(want)} was asked for; left untouched. '
                f'Remove it (rm -rf {target}) or choose another --out.']
    return []


def _build(ds, folder, seed, scale, workers):
    data_root = os.path.join(folder, os.path.relpath(ds.data_root, ds.folder))
    items = ds.plan(scale, seed)
    bar = Progress(ds.name, len(items))
    # items are independent (each has its own random stream), so the workers' order does not matter
    records = list(_map(partial(ds.make_item, data_root, seed), items, workers, bar))
    ds.finish(data_root, seed, scale, items, records)
    problems = ds.check(data_root)
    if problems:  # a generator bug, not a user error
        raise RuntimeError(f'generated {ds.name} fails its own check:\n' + format_problems(ds, problems))


def _map(fn, items, workers, bar):
    """``fn`` of each item, in order, in ``workers`` processes; ``bar`` counts them."""
    if workers > 1:
        with multiprocessing.get_context('fork').Pool(workers) as pool:
            for result in pool.imap(fn, items, chunksize=16):
                bar.update()
                yield result
    else:
        for item in items:
            result = fn(item)
            bar.update()
            yield result


class Progress:
    """A one-line progress bar on stderr. Redrawn at most ten times a second on a terminal and every few
    seconds otherwise (mmengine's ProgressBar redraws per item, which floods CI logs with 20k updates)."""

    def __init__(self, name, total, stream=sys.stderr):
        self.name, self.total, self.done, self.stream = name, total, 0, stream
        self.tty = stream.isatty()
        self.start = self.last = time.monotonic()

    def update(self):
        self.done += 1
        now = time.monotonic()
        if self.done == self.total or now - self.last >= (0.1 if self.tty else 5.0):
            self.last = now
            bar = '#' * (30 * self.done // self.total)
            end = '\n' if self.done == self.total or not self.tty else ''
            self.stream.write(f'\r{self.name:16s} [{bar:30s}] {self.done}/{self.total} images, '
                              f'{now - self.start:.1f}s{end}')
            self.stream.flush()


def check(datasets, path, single=False, workers=1):
    """{dataset name: problems}. ``path`` is a demo root holding every dataset at its usual place, or
    with ``single=True`` the data root of the one dataset given (e.g. a real COCO folder). Besides its format,
    every image is decoded in full (in ``workers`` processes, with a progress bar): a truncated file has a
    valid header."""
    if single:
        (ds,) = datasets
        if not os.path.isdir(path):
            return {ds.name: [f'{path}: no such directory']}
        return {ds.name: _check_one(ds, path, workers)}
    report = {}
    for ds in datasets:
        if not os.path.isdir(os.path.join(path, ds.data_root)):
            report[ds.name] = [f'{ds.data_root}/: missing directory (expected the {ds.name} dataset)']
        else:
            report[ds.name] = [f'{ds.data_root}/{p}' for p in _check_one(ds, os.path.join(path, ds.data_root), workers)]
    return report


def _check_one(ds, data_root, workers):
    problems = ds.check(data_root)
    reported = {p.split(': ', 1)[0] for p in problems}  # an image the format check found unreadable already
    images = [rel for rel in image_files(data_root) if rel not in reported]
    bar = Progress(f'{ds.name} decode', len(images))
    return problems + [p for p in _map(partial(decode_problem, data_root), images, workers, bar) if p]


def format_problems(ds, problems):
    shown = [f'  {p}' for p in problems[:MAX_SHOWN]]
    if len(problems) > MAX_SHOWN:
        shown.append(f'  ... and {len(problems) - MAX_SHOWN} more')
    # The readers' layouts, some indented for their own error messages: aligned here under one margin.
    layout = textwrap.indent(textwrap.dedent(ds.layout), '    ')
    return '\n'.join(shown) + f'\n  expected layout:\n{layout}'
