"""mmseg's private internals the suite relies on (written for mmsegmentation 1.2.2; see ``WRITTEN_FOR``).

One reach: the layout of ``IoUMetric.results``, one tuple per image, ``(area_intersect, area_union,
area_pred_label, area_label)`` (each a per-class tensor), as ``IoUMetric.process`` appends it and
``IoUMetric.compute_metrics`` reads it (asserting four fields). mmseg documents no layout; the per-image areas are
the leaderboard's evidence and mmseg keeps them nowhere else."""
from typing import List, Sequence, Tuple

_IOU_FIELDS = 4


def name_iou_results(results: list, start: int, names: Sequence[str]) -> None:
    """Append ``names[i]`` to the per-image result ``results[start + i]`` that ``IoUMetric.process`` appended,
    so that a name travels with its image's areas when mmengine gathers the results of every rank."""
    for i, name in enumerate(names):
        results[start + i] = (*results[start + i], name)


def unname_iou_results(results: list) -> Tuple[List[str], List[tuple]]:
    """The names :func:`name_iou_results` appended ('' where none was) and the results as mmseg made them."""
    names = [r[_IOU_FIELDS] if len(r) > _IOU_FIELDS else '' for r in results]
    return names, [tuple(r[:_IOU_FIELDS]) for r in results]


def iou_areas(results: Sequence[tuple]) -> Tuple[list, list]:
    """Each image's intersection and union per class, from mmseg's per-image results."""
    return [r[0] for r in results], [r[1] for r in results]
