"""Expected orderings of a leaderboard: "supervised pre-training beats scratch by at least m on column C".

A benchmark whose numbers nobody checks cannot tell a recipe that learns from one that silently stopped: an
expectation turns what the papers show into a check on the measured table. Each is taken on the paired Δ of
:mod:`vitbench.results.baseline` (row − baseline, seed by seed over the seeds both ran): it holds where the mean Δ
is at least the column's threshold. Thresholds are set from the spread measured over seeds (the pipeline
config that declares them says which), so that a working recipe clears them on every seed and a broken one
(Δ about 0) does not.
"""
from dataclasses import dataclass
from typing import Dict, List, Optional

from .baseline import paired_deltas
from .stats import Summary
from .table import Column, LeaderboardError, Table


@dataclass(frozen=True)
class Expectation:
    row: str  # the recipe label of the rows that should be ahead, e.g. 'supervised'
    over: str  # the recipe label they are compared with, e.g. 'scratch'
    min_delta: Dict[str, float]  # column label as the leaderboard prints it -> least mean Δ


@dataclass(frozen=True)
class Outcome:
    expectation: Expectation
    backbone: str
    column: str
    threshold: float
    delta: Optional[Summary]  # None: a row or a cell is missing, which fails the check

    @property
    def holds(self) -> bool:
        return self.delta is not None and self.delta.mean >= self.threshold

    @property
    def line(self) -> str:
        e = self.expectation
        want = f'{e.row} - {e.over} >= {self.threshold:+g} on {self.column} ({self.backbone})'
        if self.delta is None:
            return f'{"FAILED" if not self.holds else "ok"}: {want}: no paired value (a run or a cell is missing)'
        d = self.delta
        spread = f', 95 % interval [{d.ci95_low:+.2f}, {d.ci95_high:+.2f}]' if d.ci95_low is not None else ''
        return f'{"ok" if self.holds else "FAILED"}: {want}: measured {d.mean:+.2f} (n={d.n}{spread})'


def expectations_from(specs, where: str) -> List[Expectation]:
    """Expectations from config data, ``[dict(row=..., over=..., min_delta={column label: threshold})]``;
    anything else is an error naming ``where`` and the key."""
    if not isinstance(specs, (list, tuple)):
        raise ValueError(f"{where}: key 'expect' is {specs!r}, expected a list of "
                         "dict(row='supervised', over='scratch', min_delta={'<column label>': <threshold>})")
    found = []
    for i, spec in enumerate(specs):
        at = f"{where}: expect[{i}]"
        if not isinstance(spec, dict) or set(spec) != {'row', 'over', 'min_delta'}:
            raise ValueError(f"{at} is {spec!r}, expected a dict with exactly the keys row, over, min_delta")
        if not all(isinstance(spec[k], str) and spec[k] for k in ('row', 'over')):
            raise ValueError(f"{at}: row and over must be recipe labels such as 'supervised' and 'scratch'")
        thresholds = spec['min_delta']
        if not isinstance(thresholds, dict) or not thresholds or not all(
                isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
                for k, v in thresholds.items()):
            raise ValueError(f"{at}: min_delta is {thresholds!r}, expected a non-empty mapping of column label "
                             "(as the leaderboard prints it, e.g. 'Flowers-102 top-1 (full)') to a number")
        found.append(Expectation(spec['row'], spec['over'], {k: float(v) for k, v in thresholds.items()}))
    return found


def check_expectations(table: Table, expectations: List[Expectation]) -> List[Outcome]:
    """One outcome per expectation, backbone and column; a column label the table does not have, or a recipe
    no row has, is an error (a typo must not pass as a kept promise)."""
    columns: Dict[str, Column] = {c.label: c for c in table.columns}
    outcomes = []
    for e in expectations:
        unknown = sorted(set(e.min_delta) - set(columns))
        if unknown:
            raise LeaderboardError(f'expected ordering {e.row} > {e.over}: no column {unknown} in the table '
                                   f'(its columns: {", ".join(columns)})')
        deltas = paired_deltas(table, e.over)
        backbones = sorted({r.backbone for r in table.rows if r.recipe == e.row})
        if not backbones:
            raise LeaderboardError(f"expected ordering {e.row} > {e.over}: no row has the recipe '{e.row}' "
                                   f"(recipes: {', '.join(sorted({r.recipe for r in table.rows}))})")
        for backbone in backbones:
            index = next((i for i, (row, _) in enumerate(deltas.pairs)
                          if row.recipe == e.row and row.backbone == backbone), None)
            for label, threshold in e.min_delta.items():
                delta = None if index is None else deltas.of(index, columns[label])
                outcomes.append(Outcome(e, backbone, label, threshold, delta))
    return outcomes
