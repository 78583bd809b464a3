"""Disagreement between classifiers (thesis Table 3.4: a convnet, DeiT and distilled DeiT): for two runs evaluated on
the same test images, the fraction of images whose top-1 classes differ; with the ground truth, one minus top-1.

It is read from each run's ``per_image.npz`` (:mod:`vitbench.results.per_image`): the ``accuracy`` evidence of a
metric (``top1`` on ImageNet val) holds each image's id, predicted class (``pred``) and label (``label``). Files
written before predictions were stored have correctness only, and are refused in one line. Images are paired by
id; two runs that share none are refused, and the pair's count of shared images is reported. Torch-free.
"""
import os.path as osp
from itertools import combinations
from typing import Dict, Mapping, Tuple

import numpy as np

from .per_image import FILE, EvidenceError

GROUNDTRUTH = 'groundtruth'


class Predictions:
    """One run's top-1 classes (``pred``) and labels (``label``, or None), by image id."""

    def __init__(self, path: str, ids: np.ndarray, pred: np.ndarray, label=None):
        self.path, self.ids, self.pred, self.label = path, ids, pred, label


def read_predictions(path: str, metric: str = 'top1') -> Predictions:
    """The predictions behind ``metric`` in ``path`` (a per_image.npz, or the run folder holding one)."""
    if osp.isdir(path):
        path = osp.join(path, FILE)
    if not osp.isfile(path):
        raise EvidenceError(f"{path}: not found (a run's folder, or its {FILE}, written by its evaluation)")
    try:
        with np.load(path, allow_pickle=False) as npz:
            fields = {k.partition('/')[2]: npz[k] for k in npz.files if k.partition('/')[0] == metric}
    except (OSError, ValueError) as e:
        raise EvidenceError(f'{path}: cannot be read as per-image evidence: {e}') from e
    if not fields:
        raise EvidenceError(f"{path}: has no evidence for the metric '{metric}' (--metric)")
    if 'pred' not in fields:
        raise EvidenceError(f"{path}: '{metric}/pred' is missing: written before per_image.npz stored predictions "
                            f"(correctness only); evaluate the run's checkpoint again with tools/test.py")
    ids, pred = np.asarray(fields['ids']).astype(str), np.asarray(fields['pred'])
    if len(ids) != len(pred) or len(set(ids)) != len(ids):
        raise EvidenceError(f"{path}: '{metric}/ids' are not one distinct id per prediction")
    return Predictions(path, ids, pred, fields.get('label'))


def pairwise(a: Predictions, b: Predictions, names: Tuple[str, str] = ('a', 'b')) -> Tuple[float, int]:
    """(the fraction of the images both runs scored whose top-1 classes differ, the number of those images)."""
    common, ia, ib = np.intersect1d(a.ids, b.ids, assume_unique=True, return_indices=True)
    if not len(common):
        raise EvidenceError(f'{names[0]} ({a.path}) and {names[1]} ({b.path}) share no test image: they were '
                            'evaluated on different sets')
    return float(np.mean(a.pred[ia] != b.pred[ib])), int(len(common))


def disagreement_matrix(runs: Mapping[str, str], metric: str = 'top1', groundtruth: bool = True) -> dict:
    """``{'metric', 'models': [label, ...], 'pairs': {'a|b': {'disagreement', 'images'}}}`` for every pair of the
    labelled runs (``runs``: label -> run folder or per_image.npz), the ground truth first among the models when
    the first run's file has labels and ``groundtruth`` is set."""
    if len(runs) < 2 and not groundtruth:
        raise ValueError(f'disagreement: needs two runs or more, got {list(runs)}')
    read = {label: read_predictions(path, metric) for label, path in runs.items()}
    models: Dict[str, Predictions] = {}
    first = next(iter(read.values()))
    if groundtruth and first.label is not None and GROUNDTRUTH not in read:
        models[GROUNDTRUTH] = Predictions(f'{first.path} (labels)', first.ids, first.label)
    models.update(read)
    if len(models) < 2:
        raise ValueError(f'disagreement: needs two runs or more (or labels in {first.path}), got {list(runs)}')
    pairs = {}
    for x, y in combinations(models, 2):
        rate, images = pairwise(models[x], models[y], (x, y))
        pairs[f'{x}|{y}'] = dict(disagreement=rate, images=images)
    return dict(metric=metric, models=list(models), runs={k: p.path for k, p in read.items()}, pairs=pairs)


def as_table(result: dict) -> str:
    """The matrix as Table 3.4 prints it: one row per model, the disagreement with each earlier one (3 digits)."""
    models = result['models']
    width = max(len(m) for m in models) + 2
    lines = [''.ljust(width) + ''.join(m[:12].rjust(13) for m in models[:-1])]
    for i, row in enumerate(models):
        cells = [f"{result['pairs'][f'{col}|{row}']['disagreement']:.3f}".rjust(13) for col in models[:i]]
        lines.append(row.ljust(width) + ''.join(cells))
    return '\n'.join(lines)
