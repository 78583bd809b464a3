"""The leaderboard as CSV: one table_header, the measured rows (section ``measured``) then each paper table's rows
(``paper: <table id>``), every cell with its summary over seeds, and formula-safe text cells (control and
bidirectional characters written as their codes: :mod:`vitbench.results.plain_text`). Its tidy sibling, one line
per cell, is :mod:`vitbench.results.render_tidy`."""
import csv
import io
from typing import Dict, List, Optional, Sequence

from .baseline import Deltas
from .plain_text import neutralize
from .rank import Ranking, column_key
from .render_text import epochs_text
from .reproduction import CSV_FIELDS, csv_cells, links_by_cell, match_reported
from .table import Column, Row, Table


_STAT_FIELDS = ('std', 'n', 'ci95_low', 'ci95_high')
_DELTA_FIELDS = ('mean', 'ci95_low', 'ci95_high', 'n')


def render_csv(measured: Table, paper: Sequence[Table], deltas: Optional[Deltas] = None,
               ranking: Optional[Ranking] = None) -> str:
    """One header: section, backbone, pretraining, epochs, params_M, gflops, then per column its mean (named by
    the column) and its std, n, ci95_low, ci95_high; with a baseline, Δ mean / ci95_low / ci95_high / n per
    column; with cells linked to paper rows, per measured column the paper's value, Δ and source (or, for a cell
    run under another protocol than the paper's, why it is not compared); with a cross-task ranking, each
    measured row's rank, mean z and its interval, P(rank k), whether it is indistinguishable from the best, and
    the columns ranked over (or why the row is not ranked); then the cost (device-hours, peak memory), runs,
    best, note."""
    columns: List[Column] = list(measured.columns)
    for table in paper:
        columns += [c for c in table.columns if c not in columns]
    columns.sort(key=Column.sort_key)
    buf = io.StringIO()
    writer = SafeCsvWriter(buf)
    metric_head = [name for c in columns for name in (c.label, *(f'{c.label} {f}' for f in _STAT_FIELDS),
                                                      f'{c.label} interval over')]
    delta_head = [f'Δ {c.label} {f}' for c in measured.columns for f in _DELTA_FIELDS] if deltas else []
    linked, unlinked = match_reported(measured, paper)
    links = links_by_cell(linked)
    mismatches = {(id(m.row), m.column): m for m in unlinked}
    reported_head = [f'{c.label} {f}' for c in measured.columns for f in CSV_FIELDS] if links or mismatches else []
    rank_head = _csv_rank_head(ranking) if ranking else []
    no_rank = [''] * len(rank_head)
    writer.writerow(['section', 'backbone', 'pretraining', 'epochs', 'params_M', 'gflops', *metric_head,
                     *(['delta_vs'] if deltas else []), *delta_head, *reported_head, *rank_head,
                     'pretrain_device_hours', 'total_device_hours', 'peak_mem_MB', 'runs', 'best', 'note'])

    def number(value):
        return '' if value is None else f'{value:.4f}'.rstrip('0').rstrip('.')

    def stats_of(row: Row, column: Column) -> list:
        summary = row.stats.get(column)
        value = row.values.get(column)
        if summary is None:
            return [number(value), '', '1' if value is not None else '', '', '', '']
        return [number(summary.mean), *(number(getattr(summary, f)) for f in _STAT_FIELDS), summary.interval]

    rank_cells = _csv_rank_cells(ranking, number) if ranking else {}
    delta_index = {id(row): i for i, (row, _) in enumerate(deltas.pairs)} if deltas else {}
    for section, table in [('measured', measured)] + [(f'paper: {t.id}', t) for t in paper]:
        is_measured = table is measured
        for row in table.rows:
            best = [c.label for c in table.columns if is_measured and table.is_best(row, c)]
            delta_cells = []
            if deltas:
                i = delta_index.get(id(row)) if is_measured else None
                delta_cells.append(deltas.baseline if i is not None else '')
                for c in measured.columns:
                    d = deltas.of(i, c) if i is not None else None
                    delta_cells += [number(getattr(d, f)) if d else '' for f in _DELTA_FIELDS]
            reported_cells = [v for c in measured.columns for v in csv_cells(
                links.get((id(row), c)), number, mismatches.get((id(row), c)))] if links or mismatches else []
            writer.writerow([section, row.backbone, row.recipe, epochs_text(row), number(row.params_M),
                             number(row.gflops), *[v for c in columns for v in stats_of(row, c)], *delta_cells,
                             *reported_cells, *(rank_cells.get(id(row), no_rank) if is_measured else no_rank),
                             number(row.pretrain_hours), number(row.total_hours), number(row.peak_mem_MB),
                             len(row.runs) if is_measured else '', '; '.join(best),
                             '; '.join(f'{c.label}: conflict, {text}' for c, text in row.conflicts.items())
                             if is_measured else row.note])
    return neutralize(buf.getvalue())


def _csv_rank_head(ranking: Ranking) -> List[str]:
    return ['rank', 'rank mean_z', 'rank mean_z ci95_low', 'rank mean_z ci95_high',
            *[f'P(rank {k})' for k in range(1, len(ranking.ranked) + 1)], 'rank tied_with_best', 'rank over']


def _csv_rank_cells(ranking: Ranking, number) -> Dict[int, List[str]]:
    """The rank columns of each measured row the ranking names (by ``id``): its rank, or what it lacks to be ranked.
    Other rows (paper rows) leave them empty."""
    over = ' '.join(column_key(c) for c in ranking.columns)
    cells = {id(r.row): [str(r.rank), number(r.mean_z), number(r.ci95[0]), number(r.ci95[1]),
                         *[number(p) for p in r.rank_probability], 'yes' if r.tied_with_best else 'no', over]
             for r in ranking.ranked}
    blank = [''] * (len(_csv_rank_head(ranking)) - 1)  # all but 'rank over'
    cells.update({id(row): [*blank, 'not ranked: no ' + ', '.join(column_key(c) for c in lacks)]
                  for row, lacks in ranking.missing})
    if ranking.refused:  # no row is ranked: each says why
        return {id(row): [*blank, f'not ranked: {ranking.refused}'] for row in ranking.unranked} | cells
    return cells


class SafeCsvWriter:
    """csv.writer whose text cells cannot run as spreadsheet formulas (CSV injection): text beginning with
    = + - @ or a tab / carriage return (a backbone, recipe or dataset name from a result.json) gets a leading
    apostrophe, as OWASP advises; numbers ('-0.5') are written as they are."""

    def __init__(self, buf):
        self._writer = csv.writer(buf, lineterminator='\n')

    @staticmethod
    def _cell(value):
        if isinstance(value, str) and value.startswith(('=', '+', '-', '@', '\t', '\r')):
            try:
                float(value)
            except ValueError:
                return "'" + value
        return value

    def writerow(self, row) -> None:
        self._writer.writerow([self._cell(v) for v in row])


