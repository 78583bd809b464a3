"""The cross-task rank: "which backbone is better overall?", with how sure the answer is.

Per column, each row's value is standardised across the rows ranked (z = (value − mean) / sample std, the
z-score of Battle of the Backbones; its sign turned for an error such as mCE, so that a higher z is better); a
row's score is its mean z over the columns chosen. The uncertainty comes
from the bootstrap of :mod:`vitbench.results.bootstrap`: each resample draws every column's test images again
(the same images for all rows: they are paired) and, where a cell has several, its seeds, and ranks the rows
anew. The table gives each row's mean z with its 95 % interval, its rank, the probability of each rank, and
whether it can be told apart from the best (the interval of its difference in mean z from the best row's
excludes 0) — the question a mean z alone (BoB) or a mean score (VTAB) leaves open.

Default columns: the downstream ones (segmentation, detection, transfer) that every row with any downstream
result has. Rows missing a chosen column are listed, never ranked.

A board that cannot be ranked honestly says so instead of ranking (:attr:`Ranking.refused`): when the runs of a
column share fewer than :data:`MIN_SHARED` of the test images of each (the bootstrap would draw only the shared ones,
and compare the rows on a set none of them was scored on), or when a row's interval excludes its own mean z (the
resamples do not describe the estimate).
"""
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import numpy as np

from . import bootstrap
from .schema import downstream_kinds, kinds
from .table import Column, LeaderboardError, Row, Table


def column_key(column: Column) -> str:
    """The name ``--aggregate`` takes: 'ade20k', 'coco_box', 'coco_mask', 'cifar10', 'imagenet', 'imagenet_a',
    'imagenet_mce', 'imagenet_ece', 'ade20k_ms'."""
    key = column.dataset + kinds()[column.kind].aggregate_suffix
    if column.eval != 'ss':
        key += '_' + column.eval.replace(', ', '_').replace(' ', '-').lower()
    return key + (f'_{column.res}' if column.res else '')


# the least fraction of each run's test images that all runs of a ranked column must share
MIN_SHARED = 0.9


@dataclass
class RankedRow:
    row: Row
    mean_z: float
    ci95: Tuple[float, float]
    rank: int
    rank_probability: List[float]  # P(rank = 1), P(rank = 2), ... over the resamples
    tied_with_best: bool  # the interval of (best's mean z − this row's) includes 0 (the best row itself: True)


@dataclass
class Ranking:
    columns: List[Column]
    ranked: List[RankedRow]  # best first
    missing: List[Tuple[Row, List[Column]]] = field(default_factory=list)  # rows not ranked, and what they lack
    dropped: List[Column] = field(default_factory=list)  # default columns some row lacks, left out
    resampled: str = ''  # what the interval is over: 'images', 'seeds', 'seeds+images', '' (nothing to resample)
    resamples: int = bootstrap.RESAMPLES
    refused: str = ''  # why the rows are not ranked (then ``ranked`` is empty), '' : ranked
    unranked: List[Row] = field(default_factory=list)  # with ``refused``: the rows it would have ranked


def choose_columns(table: Table, names: Optional[Sequence[str]]) -> Tuple[List[Column], List[Column]]:
    """(the columns to rank over, default columns left out because some row lacks them)."""
    if names:
        by_key = {column_key(c): c for c in table.columns}
        unknown = [n for n in names if n not in by_key]
        if unknown:
            raise LeaderboardError(f"--aggregate: no column {', '.join(map(repr, unknown))} in the measured table; "
                                   f"expected some of: {', '.join(sorted(by_key))}")
        return [by_key[n] for n in names], []
    downstream = [c for c in table.columns if c.kind in downstream_kinds()]
    rows = [r for r in table.rows if any(c in r.values for c in downstream)]
    chosen = [c for c in downstream if all(c in r.values for r in rows)]
    return chosen, [c for c in downstream if c not in chosen]


def _standardise(values: np.ndarray) -> np.ndarray:
    """z over the rows (axis 1) of a (columns, rows, ...) array; a column where all rows are equal gives 0."""
    std = values.std(axis=1, ddof=1, keepdims=True)
    return np.where(std > 0, (values - values.mean(axis=1, keepdims=True)) / np.where(std > 0, std, 1), 0.0)


def cross_task_rank(table: Table, names: Optional[Sequence[str]] = None, resamples: int = bootstrap.RESAMPLES,
                    seed: int = bootstrap.SEED) -> Optional[Ranking]:
    """The ranking of the measured rows over the columns ``names`` (:func:`column_key`; default: see the module);
    None when fewer than two rows can be ranked or no column is left."""
    columns, dropped = choose_columns(table, names)
    candidates = [r for r in table.rows if any(c in r.values for c in columns)] if not names else table.rows
    rows = [r for r in candidates if all(c in r.values for c in columns)]
    missing = [(r, [c for c in columns if c not in r.values]) for r in candidates if r not in rows]
    if len(rows) < 2 or not columns:
        return None
    sign = np.array([-1.0 if kinds()[c.kind].lower_is_better else 1.0 for c in columns])[:, None]  # higher z: better
    point = (sign * _standardise(np.array([[r.values[c] for r in rows] for c in columns]))).mean(axis=0)
    draws = np.empty((len(columns), len(rows), resamples))
    images = seeds = False
    for i, column in enumerate(columns):
        groups = [r.evidence.get(column) or [bootstrap.Constant(r.values[column])] for r in rows]
        too_few = _too_few_shared(column, [run for g in groups for run in g])
        if too_few:
            return Ranking(columns, [], missing, dropped, refused=too_few, resamples=resamples, unranked=rows)
        draws[i], n_images = bootstrap.resampled(groups, resamples, seed)
        images |= n_images > 0
        seeds |= any(len(g) > 1 for g in groups)
    mean_z = (sign[:, :, None] * _standardise(draws)).mean(axis=0)  # (rows, resamples)
    ranks = (-mean_z).argsort(axis=0).argsort(axis=0) + 1
    best = int(point.argmax())
    order = np.argsort(-point, kind='stable')
    ranked = []
    for place, k in enumerate(order, start=1):
        low, high = bootstrap.percentile_interval(mean_z[k])
        gap_low, _ = bootstrap.percentile_interval(mean_z[best] - mean_z[k])
        ranked.append(RankedRow(rows[k], float(point[k]), (low, high), place,
                                [float((ranks[k] == r).mean()) for r in range(1, len(rows) + 1)],
                                k == best or gap_low <= 0))
    what = '+'.join(w for w, used in (('seeds', seeds), ('images', images)) if used)
    outside = [r for r in ranked if not r.ci95[0] - 1e-9 <= r.mean_z <= r.ci95[1] + 1e-9]
    if outside:
        return Ranking(columns, [], missing, dropped, what, resamples, refused=(
            'the bootstrap interval of ' + ', '.join(f'{r.row.backbone} / {r.row.recipe} ({r.mean_z:+.2f} not in '
                                                    f'[{r.ci95[0]:+.2f}, {r.ci95[1]:+.2f}])' for r in outside)
            + ' excludes its own mean z: the resamples do not describe the estimate'), unranked=rows)
    return Ranking(columns, ranked, missing, dropped, what, resamples)


def _too_few_shared(column: Column, runs: Sequence[object]) -> str:
    """Why the runs of ``column`` share too few test images to be ranked on them ('' : enough)."""
    with_ids = [r.ids for r in runs if r.ids is not None]
    if not with_ids:
        return ''
    shared = bootstrap.shared_ids(runs)
    smallest = min(len(set(ids.tolist())) for ids in with_ids)
    largest = max(len(set(ids.tolist())) for ids in with_ids)
    if len(shared) >= MIN_SHARED * largest:
        return ''
    return (f'the runs of {column.label} share {len(shared)} of their {smallest}-{largest} test images (fewer than '
            f'{MIN_SHARED:.0%} of each run\'s): they were not evaluated on one set')
