"""Paired differences against a baseline row: "does this pre-training beat training from scratch, and by how
much, with what certainty?".

The baseline is named by a recipe label (e.g. ``scratch``: every row is compared with the scratch row of its
own backbone) or by a backbone (every row with that backbone's row of the same recipe). A difference is taken
seed by seed over the seeds both rows ran (same seed: same data order and head initialisation), then
summarised: mean Δ with the 95 % interval of :func:`~vitbench.results.stats.paired_difference`. A Δ whose
interval excludes 0 is significant. Pairing can find a real difference that two overlapping unpaired
intervals would hide, since what a seed does to both runs cancels out.

Where both cells are one run each and both left per-image evidence, the Δ is paired by image instead: a
percentile bootstrap that draws the same test images for both rows (:mod:`vitbench.results.bootstrap`), so a
single seed per row, a paper-scale run, still gets an interval ("same seed or not").
"""
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from . import bootstrap
from .stats import Summary, paired_difference
from .table import Column, LeaderboardError, Row, Table


@dataclass
class Deltas:
    """Δ of each compared row against its baseline row, per column (absent: no shared seed, or no value)."""
    baseline: str
    by: str  # 'recipe' or 'backbone': what the baseline name matched
    pairs: List[Tuple[Row, Row]] = field(default_factory=list)  # (row, its baseline row), in table order
    values: Dict[Tuple[int, Column], Summary] = field(default_factory=dict)  # (index in pairs, column) -> Δ

    def of(self, index: int, column: Column) -> Optional[Summary]:
        return self.values.get((index, column))


def _partner_key(row: Row, by: str) -> tuple:
    """What a row and its baseline row share: the backbone (recipe baseline) or the recipe and epochs."""
    return (row.backbone,) if by == 'recipe' else (row.recipe, row.epochs)


def paired_deltas(table: Table, baseline: str) -> Deltas:
    """Δ of every row against the baseline row it pairs with; a name that matches no row is an error."""
    recipes, backbones = {r.recipe for r in table.rows}, {r.backbone for r in table.rows}
    if baseline in recipes:
        by = 'recipe'
    elif baseline in backbones:
        by = 'backbone'
    else:
        raise LeaderboardError(f'baseline {baseline!r} matches no row: expected a pre-training recipe '
                               f'({", ".join(sorted(recipes)) or "none"}) or a backbone '
                               f'({", ".join(sorted(backbones)) or "none"}) of the measured table')
    field_of = (lambda r: r.recipe) if by == 'recipe' else (lambda r: r.backbone)
    partners = {_partner_key(r, by): r for r in table.rows if field_of(r) == baseline}
    deltas = Deltas(baseline, by)
    for row in table.rows:
        partner = partners.get(_partner_key(row, by))
        if field_of(row) == baseline or partner is None:
            continue
        deltas.pairs.append((row, partner))
        for column in table.columns:
            if column in row.samples and column in partner.samples:
                delta = image_paired_difference(row, partner, column) or paired_difference(
                    row.samples[column], partner.samples[column])
                if delta is not None:
                    deltas.values[len(deltas.pairs) - 1, column] = delta
    return deltas


def image_paired_difference(row: Row, partner: Row, column: Column) -> Optional[Summary]:
    """Δ of two cells of one run each with its bootstrap interval over the images both were tested on; None
    unless both left per-image evidence on shared images (cells of several seeds: the paired t over seeds)."""
    runs, others = row.evidence.get(column, []), partner.evidence.get(column, [])
    if len(runs) != 1 or len(others) != 1 or any(isinstance(r, bootstrap.Constant) for r in [*runs, *others]):
        return None
    values, n_images = bootstrap.resampled([runs, others])
    if not n_images:
        return None
    low, high = bootstrap.percentile_interval(values[0] - values[1])
    return Summary(row.values[column] - partner.values[column], 1, None, low, high, 'images')
