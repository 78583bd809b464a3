"""Per-image evidence: what an evaluation leaves beside its ``result.json`` so that the leaderboard can bootstrap
an interval over the test images from a single run (:mod:`vitbench.results.bootstrap`).

``work_dir/per_image.npz`` holds, for each headline metric that has it, arrays named ``<metric>/<field>``:

* every metric: ``<metric>/kind`` (what follows) and ``<metric>/ids``, the images' identifiers in evaluation
  order (file names, or COCO image ids), by which two runs on the same test set are paired;
* ``accuracy`` (top-1 of ImageNet, V2, ReaL, transfer): ``correct``, one bool per image; since predictions are
  stored also ``pred``, each image's top-1 class, ``topk`` (images, k) its top-k classes best first (top-5 where
  the metric has it) and ``label`` (not for ReaL, whose images have several): what
  :mod:`vitbench.results.disagreement` compares between runs (thesis Table 3.4);
* ``iou`` (mIoU): ``intersect`` and ``union``, (images, classes) pixel counts, as mmseg's IoUMetric sums them;
* ``coco_ap`` (box and mask AP): pycocotools' per-image matches (:mod:`vitbench.results.coco_ap`);
* ``mean`` (retrieval mAP): ``value``, each image's own score in percent (a query's average precision against a
  fixed collection), the metric being their mean;
* ``calibration`` (ECE): ``confidence`` and ``correct`` of each image's top-1, and the number of ``bins``;
* ``grouped_error`` (ImageNet-C's mCE): one entry per image and test condition (corruption, severity):
  ``entry_image`` (its image, an index into ``ids``: the copies of one image are drawn together), ``correct``,
  ``group`` (its condition) and per group ``group_weight``, such that the metric is Σ_group weight × error %.

Each evidence answers ``value(counts)``: the metric, in percent, of the test set in which image ``i`` appears
``counts[i]`` times (all ones: the metric as the run reported it). The metrics publish their arrays when they
compute (:func:`publish`); ``ResultRecorderHook`` writes what was published to ``per_image.npz`` and lists the
metrics in result.json's ``per_image``. Torch-free, like the rest of the leaderboard.
"""
import io
import os.path as osp
from typing import Dict, List, Mapping, Optional

import numpy as np

from vitbench.fileio import atomic_write_bytes

FILE = 'per_image.npz'
_published: Dict[str, Dict[str, np.ndarray]] = {}  # metric -> fields, until the recorder takes them


def publish(metric: str, kind: str, ids, **fields) -> None:
    """Called by a metric when it computes: the per-image arrays behind ``metric`` (its name in result.json)."""
    _published[metric] = dict(kind=np.array(kind), ids=np.asarray(ids), **{k: np.asarray(v) for k, v in
                                                                           fields.items()})


def take_published() -> Dict[str, Dict[str, np.ndarray]]:
    """What the metrics published since the last call, and forget it (one evaluation's worth)."""
    taken = dict(_published)
    _published.clear()
    return taken


def image_id(path: str) -> str:
    """An image's identifier from its file path: its last two components ('n01440764/x.JPEG'), the same under any
    data root."""
    return '/'.join(osp.normpath(path).replace(osp.sep, '/').split('/')[-2:])


def write(work_dir: str, evidence: Mapping[str, Mapping[str, np.ndarray]]) -> str:
    """Write one evaluation's ``evidence`` (metric -> fields) as ``work_dir/per_image.npz``, atomically, in place of
    an earlier evaluation's; returns the path."""
    path = osp.join(work_dir, FILE)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{f'{metric}/{name}': value for metric, fields in evidence.items()
                                   for name, value in fields.items()})
    atomic_write_bytes(buffer.getvalue(), path)
    return path


def metrics_in(work_dir: str) -> List[str]:
    """The metrics ``work_dir/per_image.npz`` has evidence for ([] without the file)."""
    path = osp.join(work_dir, FILE)
    if not osp.isfile(path):
        return []
    with np.load(path, allow_pickle=False) as npz:
        return sorted({key.split('/')[0] for key in npz.files})


class EvidenceError(ValueError):
    """A per_image.npz that cannot be used; the message names the file and the array."""


class Evidence:
    """What every kind of evidence has: the images' ``ids``, ``values`` of a (resamples, images) count matrix, and
    from it ``value`` of one count vector."""
    ids: np.ndarray

    def value(self, counts: np.ndarray) -> float:
        return float(self.values(np.asarray(counts)[None])[0])

    def values(self, counts: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class Accuracy(Evidence):
    """Top-1 from per-image correctness."""

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = fields['ids']
        self.correct = np.asarray(fields['correct'], dtype=np.float64)

    def values(self, counts: np.ndarray) -> np.ndarray:
        """``value`` of each row of a (resamples, images) count matrix."""
        return 100.0 * (counts @ self.correct) / counts.sum(axis=1)


class Mean(Evidence):
    """The mean of a per-image score (retrieval mAP: each query's AP against a collection that is not resampled)."""

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = fields['ids']
        self.score = np.asarray(fields['value'], dtype=np.float64)

    def values(self, counts: np.ndarray) -> np.ndarray:
        return (counts @ self.score) / counts.sum(axis=1)


class MeanIoU(Evidence):
    """mmseg's mIoU: per class, the summed intersections over the summed unions; the mean over the classes whose
    union is not empty (a nanmean, as mmseg's)."""

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = fields['ids']
        self.intersect = np.asarray(fields['intersect'], dtype=np.float64)
        self.union = np.asarray(fields['union'], dtype=np.float64)

    def values(self, counts: np.ndarray) -> np.ndarray:
        intersect, union = counts @ self.intersect, counts @ self.union
        with np.errstate(invalid='ignore', divide='ignore'):
            iou = np.where(union > 0, intersect / union, np.nan)
        return 100.0 * np.nanmean(iou, axis=1)


class Calibration(Evidence):
    """Expected calibration error (Guo et al. 2017): over equal-width confidence bins, the image-weighted mean of
    |accuracy − mean confidence| of each bin, in percent."""

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = fields['ids']
        bins = int(fields['bins'])
        confidence = np.asarray(fields['confidence'], dtype=np.float64)
        edges = np.linspace(0, 1, bins + 1)
        bin_of = np.searchsorted(edges[1:-1], confidence, side='left')  # (k/bins, (k+1)/bins]
        gap = np.asarray(fields['correct'], dtype=np.float64) - confidence
        self.signed = np.zeros((len(confidence), bins))
        self.signed[np.arange(len(confidence)), bin_of] = gap  # image i's accuracy − confidence, in its bin

    def values(self, counts: np.ndarray) -> np.ndarray:
        return 100.0 * np.abs(counts @ self.signed).sum(axis=1) / counts.sum(axis=1)


class GroupedError(Evidence):
    """A weighted sum of top-1 errors over groups of test conditions, each condition seen on every image:
    ImageNet-C's mCE, whose weights are 1 / (corruptions × severities × AlexNet's mean error)."""

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = fields['ids']
        weight = np.asarray(fields['group_weight'], dtype=np.float64)
        image, group = np.asarray(fields['entry_image']), np.asarray(fields['group'])
        correct = np.asarray(fields['correct'], dtype=np.float64)
        self.seen = np.zeros((len(self.ids), len(weight)))  # per image and group: entries, and right ones
        self.right = np.zeros((len(self.ids), len(weight)))
        np.add.at(self.seen, (image, group), 1.0)
        np.add.at(self.right, (image, group), correct)
        self.weight = weight

    def values(self, counts: np.ndarray) -> np.ndarray:
        seen, right = counts @ self.seen, counts @ self.right
        with np.errstate(invalid='ignore', divide='ignore'):
            error = np.where(seen > 0, 100.0 * (1 - right / np.where(seen > 0, seen, 1)), 0.0)
        return error @ self.weight


def _coco_ap(fields):
    from .coco_ap import CocoAP  # the matcher's bookkeeping, only when a detection run is read
    return CocoAP(fields)


KINDS = {'accuracy': Accuracy, 'mean': Mean, 'iou': MeanIoU, 'coco_ap': _coco_ap, 'calibration': Calibration,
         'grouped_error': GroupedError}


def read(path: str, metrics=None) -> Dict[str, object]:
    """The evidence in ``path`` by metric (only ``metrics`` when given): objects with ``ids`` and ``value(counts)``.
    A damaged file or a metric with missing arrays raises :class:`EvidenceError` naming the file."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            grouped: Dict[str, Dict[str, np.ndarray]] = {}
            for key in npz.files:
                metric, _, name = key.partition('/')
                if metrics is None or metric in metrics:
                    grouped.setdefault(metric, {})[name] = npz[key]
    except (OSError, ValueError) as e:
        raise EvidenceError(f'{path}: cannot be read as per-image evidence: {e}') from e
    evidence = {}
    for metric, fields in grouped.items():
        kind = str(fields.get('kind', ''))
        if kind not in KINDS or 'ids' not in fields:
            raise EvidenceError(f"{path}: '{metric}/kind' is {kind!r} (expected one of {sorted(KINDS)}) or "
                                f"'{metric}/ids' is missing")
        try:
            evidence[metric] = KINDS[kind](fields)
        except KeyError as e:
            raise EvidenceError(f"{path}: '{metric}/{e.args[0]}' is missing ({kind} evidence)") from None
    return evidence


def evidence_of(result_path: str, metric: str) -> Optional[object]:
    """The evidence behind ``metric`` of the run whose result.json is ``result_path``, or None when it left none."""
    path = osp.join(osp.dirname(result_path), FILE)
    if not osp.isfile(path):
        return None
    return read(path, [metric]).get(metric)
