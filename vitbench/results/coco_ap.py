"""COCO box / mask AP of any multiset of the test images, from one pycocotools evaluation: the ``coco_ap`` evidence
of :mod:`vitbench.results.per_image`.

AP is not a mean over images: ``COCOeval.accumulate`` ranks every detection of a category over the whole test set
before it reads precision at 101 recall levels. What it ranks, though, is per image and does not change when other
images join or leave: ``evaluate`` matches each image's detections to that image's ground truth only. So the
evidence keeps, per detection, its image, category, score and match / ignore bits at each IoU threshold, and per
(image, category) the ground truths that count; :class:`CocoAP` redoes ``accumulate`` + ``summarize`` (AP@[.50:.95],
area 'all', 100 detections) for the test set in which image ``i`` appears ``counts[i]`` times.

Torch-free and pycocotools-free at import: the leaderboard reads this without the detection stack.
"""
from typing import Dict, Mapping

import numpy as np

from .per_image import Evidence

_BIT_ORDER = 'little'


def coco_evidence(coco_eval, max_det: int = 100) -> Dict[str, np.ndarray]:
    """Flat arrays (no objects: ``np.savez(allow_pickle=False)`` keeps them) from a ``COCOeval`` after
    ``evaluate()``, enough to recompute its ``stats[0]`` for any multiset of its images:

    * ``ids``: the COCO image ids, in ``params.imgIds`` order (sorted, as ``evaluate`` leaves them);
    * ``category_ids``, ``iou_thrs``, ``rec_thrs``: the evaluation's categories and thresholds;
    * per detection, the first ``max_det`` of each (image, category) as ``evaluateImg`` sorted them, in ``evalImgs``
      order: ``det_image`` and ``det_category`` (indices into ``ids`` / ``category_ids``), ``det_score``, and
      ``det_matched`` / ``det_ignored``, one bit per IoU threshold packed into bytes (``np.packbits``, little);
    * ``gt_count``: (images, categories), the ground truths that are not ignored (crowds are).

    Which (image, category) pairs had an ``evalImg`` is not kept: a category counts in the mean exactly when its
    non-ignored ground truths are more than none, and those imply an ``evalImg``.
    """
    p = coco_eval.params
    if not coco_eval.evalImgs:
        raise ValueError('coco_evidence needs a COCOeval after evaluate()')
    if not p.useCats:
        raise ValueError('coco_evidence is for per-category AP (params.useCats=1), not proposal recall')
    if max_det not in p.maxDets:
        raise ValueError(f'max_det={max_det} is not one of the evaluation\'s maxDets {p.maxDets}: summarize() '
                         'would have no AP at it')
    images, categories = len(p.imgIds), len(p.catIds)
    area = p.areaRngLbl.index('all')
    areas = len(p.areaRng)
    det_image, det_category, det_score, det_matched, det_ignored = [], [], [], [], []
    gt_count = np.zeros((images, categories), dtype=np.int32)
    for k in range(categories):
        first = (k * areas + area) * images  # evalImgs is [category][area range][image]
        for i, e in enumerate(coco_eval.evalImgs[first:first + images]):
            if e is None:
                continue
            gt_count[i, k] = np.count_nonzero(np.asarray(e['gtIgnore']) == 0)
            n = min(len(e['dtScores']), max_det)
            if n == 0:
                continue
            det_image.append(np.full(n, i, dtype=np.int32))
            det_category.append(np.full(n, k, dtype=np.int32))
            det_score.append(np.asarray(e['dtScores'][:n], dtype=np.float64))
            det_matched.append(np.asarray(e['dtMatches'])[:, :n].T != 0)
            det_ignored.append(np.asarray(e['dtIgnore'])[:, :n].T != 0)
    thresholds = len(p.iouThrs)

    def joined(parts, dtype, width=None):
        if parts:
            return np.concatenate(parts)
        return np.zeros((0,) if width is None else (0, width), dtype=dtype)

    score = joined(det_score, np.float64)
    if np.array_equal(score.astype(np.float32), score):
        score = score.astype(np.float32)  # mmdet's scores are float32: half the bytes, the same order
    return dict(
        ids=np.asarray(p.imgIds, dtype=np.int64),
        category_ids=np.asarray(p.catIds, dtype=np.int64),
        iou_thrs=np.asarray(p.iouThrs, dtype=np.float64),
        rec_thrs=np.asarray(p.recThrs, dtype=np.float64),
        det_image=joined(det_image, np.int32),
        det_category=joined(det_category, np.int32),
        det_score=score,
        det_matched=np.packbits(joined(det_matched, bool, thresholds), axis=1, bitorder=_BIT_ORDER),
        det_ignored=np.packbits(joined(det_ignored, bool, thresholds), axis=1, bitorder=_BIT_ORDER),
        gt_count=gt_count,
    )


class CocoAP(Evidence):
    """pycocotools' AP@[.50:.95] (area 'all', 100 detections per image and category; ``stats[0] * 100``) of the
    test set in which image ``i`` appears ``counts[i]`` times, equal to pycocotools run on that set with each copy
    given a new id, consecutive in the order of ``ids`` (copies adjacent).

    How: in that set a detection's copies share its score, so ``accumulate``'s stable sort puts them next to each
    other; the ranking of the distinct detections is computed once. A run of ``c`` copies of a true positive
    raises precision until its last copy, a run of false positives lowers it from its first: the right-to-left
    maximum of precision at a recall level is the maximum over the ends of true-positive runs from there on, and
    recall level ``r`` falls in the run of the true positive whose cumulative count first reaches ``r * npig``.
    Per category and IoU threshold that is one cumulative sum over weighted events, a suffix maximum, and how many
    of ``rec_thrs`` each run crosses (``searchsorted``, as ``accumulate`` does, on ``tp / npig``), with the same
    floating-point expressions as pycocotools (``tp / (fp + tp + np.spacing(1))``). Categories with no non-ignored
    ground truth in the multiset are left out of the mean (pycocotools' -1); when no category has any, the value
    is pycocotools' ``-1 * 100``.

    Exact (to the rounding of the final mean) for all-ones counts, the run's own AP, and for any counts of 0 and 1.
    Ties between images are exact too (the copies of the earlier image come first, as here). Not so two *different*
    detections of one category in one image with exactly the same score, that image counted twice or more: the
    real copies interleave them (a b a b), here each detection's copies stay together (a a b b); the tie group's
    end point agrees, the precision within it may not.

    Speed: ``values`` of 1,000 resamples of COCO-val-sized evidence (synthetic: 5,000 images, 80 categories, 100
    detections per image, 36,500 ground truths, 26,000 detections matched) took 10 s on a 2-core AMD EPYC (10-15 s
    with its other core busy); ``__init__`` 0.2 s.
    """

    def __init__(self, fields: Mapping[str, np.ndarray]):
        self.ids = np.asarray(fields['ids'])
        self.rec_thrs = np.asarray(fields['rec_thrs'], dtype=np.float64)
        self.gt_count = np.asarray(fields['gt_count'], dtype=np.float64)  # (images, categories)
        thresholds = len(fields['iou_thrs'])
        image = np.asarray(fields['det_image'], dtype=np.intp)
        category = np.asarray(fields['det_category'], dtype=np.intp)
        score = np.asarray(fields['det_score'], dtype=np.float64)
        matched = _unpack(fields['det_matched'], thresholds)
        ignored = _unpack(fields['det_ignored'], thresholds)
        # accumulate's rank: by score, ties in image order, then in evaluateImg's order (the stored order)
        rank = np.lexsort((image, -score, category))
        image, category, matched, ignored = image[rank], category[rank], matched[rank], ignored[rank]
        # What moves a category's precision / recall curve: its *events* (detections matched or ignored at some
        # IoU threshold) one by one, and how many detections that are false positives at every threshold come
        # before each event (those after its last event cannot raise any precision that is read).
        is_event = matched.any(axis=1) | ignored.any(axis=1)
        self._event_image = image[is_event]
        self._tp = (matched & ~ignored)[is_event].astype(np.float64)  # (events, T), in rank order by category
        self._fp = (~matched & ~ignored)[is_event].astype(np.float64)
        event_category = category[is_event]
        first_event = np.searchsorted(event_category, np.arange(self.gt_count.shape[1] + 1))
        self._categories = [(k, slice(first_event[k], first_event[k + 1])) for k in range(self.gt_count.shape[1])
                            if first_event[k + 1] > first_event[k]]
        next_event = np.cumsum(is_event)  # at a non-event: the events ranked before it, the next one's index
        before_an_event = ~is_event & (next_event < first_event[category + 1])
        self._fp_image, self._fp_next_event = image[before_an_event], next_event[before_an_event]

    def values(self, counts: np.ndarray) -> np.ndarray:
        """``value`` of each row of a (resamples, images) count matrix."""
        counts = np.asarray(counts, dtype=np.float64)
        if counts.ndim != 2 or counts.shape[1] != len(self.ids):
            raise ValueError(f'counts should be (resamples, {len(self.ids)}), got {counts.shape}')
        return np.concatenate([self._values(counts[start:start + _ROWS]) for start in range(0, len(counts), _ROWS)]
                              or [np.zeros(0)])

    def _values(self, counts: np.ndarray) -> np.ndarray:
        npig = counts @ self.gt_count  # (rows, categories): non-ignored ground truths in each multiset
        # copies of the always-false positives between one event and the next (summed over the images per gap)
        fp_gap = np.stack([np.bincount(self._fp_next_event, weights=row[self._fp_image], minlength=len(self._tp))
                           for row in counts])
        ap_sum = np.zeros(len(counts))
        for k, events in self._categories:
            ap_sum += self._category_ap(events, counts, npig[:, k], fp_gap[:, events])
        present = np.count_nonzero(npig > 0, axis=1)
        with np.errstate(invalid='ignore', divide='ignore'):
            return np.where(present > 0, 100.0 * ap_sum / present, -100.0)

    def _category_ap(self, events: slice, counts: np.ndarray, npig: np.ndarray, fp_gap: np.ndarray) -> np.ndarray:
        """One category's AP averaged over the IoU thresholds, per row of ``counts`` (0 where ``npig`` is 0, which
        the caller leaves out of the mean)."""
        ap = np.zeros(len(counts))
        event_tp, event_fp = self._tp[events], self._fp[events]
        size, thresholds = event_tp.shape
        rows = np.flatnonzero(npig > 0)
        step = max(1, _CHUNK_ELEMENTS // (size * thresholds))
        for start in range(0, len(rows), step):
            chunk = rows[start:start + step]
            weight = counts[np.ix_(chunk, self._event_image[events])]  # (rows, events): copies of each event
            fp_before = np.cumsum(fp_gap[chunk], axis=1)  # always-false positives ranked before each event
            tp = np.cumsum(weight[:, :, None] * event_tp, axis=1)  # (rows, events, T), as accumulate's tp_sum
            fp = np.cumsum(weight[:, :, None] * event_fp, axis=1) + fp_before[:, :, None]
            precision = tp / (fp + tp + np.spacing(1))
            # right-to-left maximum; at the end of a run that is not a true positive's, precision is never above
            # its value at the end of the run before, so taking those in too changes nothing
            envelope = np.maximum.accumulate(precision[:, ::-1], axis=1)[:, ::-1]
            recall = tp / npig[chunk, None, None]
            reached = np.searchsorted(self.rec_thrs, recall, side='right')  # recall levels at or below
            # levels first reached in each event's run; the first event also takes recall 0 (index 0 of the curve)
            newly = np.diff(reached, axis=1, prepend=0)
            ap[chunk] = np.einsum('bet,bet->b', envelope, newly) / (len(self.rec_thrs) * thresholds)
        return ap


_ROWS = 128  # resamples at once: (rows, events) sums stay small
_CHUNK_ELEMENTS = 1 << 16  # (rows, events, thresholds) floats per step: 512 kB an array, near the cache


def _unpack(packed: np.ndarray, thresholds: int) -> np.ndarray:
    """(detections, T) bools from ``coco_evidence``'s packed bytes."""
    packed = np.asarray(packed, dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=thresholds, bitorder=_BIT_ORDER).astype(bool)
