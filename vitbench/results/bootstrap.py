"""Intervals from resampling: the test images of one run (the per-image evidence of
:mod:`vitbench.results.per_image`) and, where a cell has several, its seeds.

A paper-scale run is one seed, so a t-interval over seeds does not exist; the images it was tested on still vary.
The percentile bootstrap draws the test set again with replacement (1,000 times, seeded), recomputes the metric
from the per-image evidence each time — mIoU and AP are not means over images, so the evidence keeps what they
are computed from — and reads the 2.5th and 97.5th percentiles. Cells and rows compared with each other are
drawn on the *same* image resamples (over the images all of them were tested on), which pairs them: what an
image does to both cancels, as a seed does in the paired t of :mod:`vitbench.results.stats`. Where a cell has
several seeds, the cross-task rank also draws its seeds with replacement in each resample (the mean over the
drawn seeds); a cell's own interval over seeds stays Student's t, which a percentile bootstrap of a handful of
seeds would make too narrow.
"""
import hashlib
import weakref
from typing import Iterator, List, Optional, Sequence, Tuple

import numpy as np

RESAMPLES = 1000
SEED = 0
CONFIDENCE = 0.95
_CHUNK = 100  # resamples drawn at once: (chunk, images) counts stay small for ImageNet's 50,000 images
# run -> {(resamples, seed, shared images): its values}: a cell's interval, its Δ and the rank draw the same image
# resamples, so each run's metric is recomputed once per board (COCO AP, 1,000 times: seconds)
_memo: 'weakref.WeakKeyDictionary' = weakref.WeakKeyDictionary()


class Constant:
    """A run without per-image evidence (an older result.json): the same value in every resample."""
    ids = None

    def __init__(self, value: float):
        self.value_ = float(value)

    def values(self, counts: np.ndarray) -> np.ndarray:
        return np.full(len(counts), self.value_)


def shared_ids(runs: Sequence[object]) -> Optional[np.ndarray]:
    """The image ids every run with evidence was tested on, in the first one's order (None: no run has evidence)."""
    with_ids = [r.ids for r in runs if r.ids is not None]
    if not with_ids:
        return None
    common = set(with_ids[0].tolist())
    for ids in with_ids[1:]:
        common &= set(ids.tolist())
    return np.array([i for i in with_ids[0].tolist() if i in common], dtype=with_ids[0].dtype)


def _positions(run, ids: np.ndarray) -> np.ndarray:
    index = {v: i for i, v in enumerate(run.ids.tolist())}
    return np.array([index[v] for v in ids.tolist()], dtype=np.int64)


def image_counts(n: int, resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """(chunk, n) matrices: how often each of ``n`` images is drawn in each resample (n draws with replacement)."""
    for start in range(0, resamples, _CHUNK):
        k = min(_CHUNK, resamples - start)
        draws = rng.integers(0, n, size=(k, n)) + n * np.arange(k)[:, None]
        yield np.bincount(draws.ravel(), minlength=k * n).reshape(k, n)


def resampled(groups: Sequence[Sequence[object]], resamples: int = RESAMPLES,
              seed: int = SEED) -> Tuple[np.ndarray, int]:
    """(len(groups), resamples) values and the number of images resampled. A group is one cell's runs (per-image
    evidence, or :class:`Constant`); all groups share each image resample, over the images every run with evidence
    was tested on; a group of several runs also resamples them (the mean of the drawn runs)."""
    runs = [r for group in groups for r in group]
    ids = shared_ids(runs)
    rng = np.random.default_rng(seed)
    if ids is None or len(ids) == 0:
        per_run = [r.values(np.ones((resamples, 1))) for r in runs]
        n = 0
    else:
        n = len(ids)
        key = (resamples, seed, hashlib.sha1(ids.tobytes()).hexdigest())
        todo = [i for i, r in enumerate(runs) if key not in _memo.get(r, {})]
        if todo:
            places = {i: None if runs[i].ids is None else _positions(runs[i], ids) for i in todo}
            chunks: dict = {i: [] for i in todo}
            for counts in image_counts(n, resamples, rng):
                for i in todo:
                    run, where = runs[i], places[i]
                    if where is None:
                        chunks[i].append(run.values(counts))
                        continue
                    own = np.zeros((len(counts), len(run.ids)), dtype=counts.dtype)
                    own[:, where] = counts
                    chunks[i].append(run.values(own))
            for i in todo:
                _memo.setdefault(runs[i], {})[key] = np.concatenate(chunks[i])
        per_run = [_memo[r][key] for r in runs]
    rng = np.random.default_rng([seed, 1])  # the seeds' draws: the same whatever was memoised
    out, start = np.empty((len(groups), resamples)), 0
    for g, group in enumerate(groups):
        values = np.stack(per_run[start:start + len(group)])  # (runs, resamples)
        start += len(group)
        if len(group) > 1:  # the seeds drawn again in each resample
            pick = rng.integers(0, len(group), size=(resamples, len(group)))
            out[g] = values[pick, np.arange(resamples)[:, None]].mean(axis=1)
        else:
            out[g] = values[0]
    return out, n


def percentile_interval(values: np.ndarray) -> Tuple[float, float]:
    low, high = np.percentile(values, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)])
    return float(low), float(high)
