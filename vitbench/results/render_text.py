"""What every leaderboard format shows, as text: the legends, the number formats, a table's header and its row_cells
(each measured cell with its tooltip and whether it is its column's best), the paired-Δ rows, the cross-task
rank's rows and notes, and the warnings' lines. The formats lay them out: :mod:`vitbench.results.render_md`,
:mod:`vitbench.results.render_csv`, :mod:`vitbench.results.render_html`."""
import os.path as osp
from typing import List, Optional, Sequence, Tuple

from .baseline import Deltas
from .rank import Ranking, column_key
from .reproduction import fmt_reported
from .stats import Summary
from .table import Row, Table

LEGEND = ('Bold: best value of its column (higher is better, lower for mCE and ECE; columns with at least two '
          'values). '
          'Empty cell: not measured. Params and GFLOPs: the backbone alone, at its own resolution. '
          'mean ± std (n=k): k runs with different seeds (sample std). '
          '[a, b]: one run\'s 95 % interval over its test images, a percentile bootstrap of its per-image results '
          '(1,000 resamples). '
          'Device-hours (dev-h): wall time × devices, of the pre-training and of everything the row ran.')
LAYOUT_LEGEND = ('Columns are grouped per task, downstream tasks first; robustness and calibration have their own '
                 'table below (folded). Under each number, in small type: its interval, n, and the paper\'s number '
                 'where one is linked. Tables wider than the window scroll sideways in their box; the header and the '
                 'backbone column stay in view.')
TOOLTIP_LEGEND = LAYOUT_LEGEND.replace('Under each number, in small type', 'In the tooltip of each number')
DELTA_LEGEND = ('Δ: mean over the seeds both rows ran of (row − baseline), seed by seed, with its 95 % confidence '
                'interval (Student t); "by image": one run each, both with per-image results: the interval is a '
                'paired bootstrap over the test images they share; * marks a Δ whose interval excludes 0.')
RANK_LEGEND = ('Per column, z = (value − mean of the rows) / std of the rows (Battle of the Backbones); mean z over '
               'the columns below. The 95 % interval and the rank probabilities come from {resamples:,} bootstrap '
               'resamples ({what}), all rows drawn on the same images. ≈ best: cannot be told apart from the best '
               'row (the interval of its difference in mean z includes 0).')
COST_HEADER = ['pretrain dev-h', 'total dev-h', 'peak mem (MB)']
PAPER_INTRO = ('Numbers copied from the papers (vitbench/results/papers/: one file per document), one table per source '
               'table. They are references, not runs of this suite, and are never mixed with the measured rows.')


def fmt_metric(value: Optional[float]) -> str:
    return '' if value is None else f'{value:.1f}'


def fmt_cost(value: Optional[float]) -> str:
    if value is None:
        return ''
    return f'{value:.0f}' if value >= 1e4 else f'{value:.4g}'


def fmt_summary(summary: Optional[Summary]) -> str:
    """'41.2' for one run, '41.2 [39.8, 42.5]' for one run with its interval over images, '41.2 ± 0.8 (n=3)' for
    several seeds (their t-interval in the tooltip and the CSV)."""
    if summary is None:
        return ''
    if summary.n < 2:
        interval = '' if summary.ci95_low is None else f' [{summary.ci95_low:.1f}, {summary.ci95_high:.1f}]'
        return fmt_metric(summary.mean) + interval
    return f'{summary.mean:.1f} ± {summary.std:.1f} (n={summary.n})'


def fmt_delta(delta: Optional[Summary]) -> str:
    """'+3.2 [+1.1, +5.3] (n=3) *' (the star: the interval excludes 0); '+3.2 (n=1)' without an interval."""
    if delta is None:
        return ''
    if delta.ci95_low is None:
        return f'{delta.mean:+.1f} (n={delta.n})'
    star = ' *' if delta.excludes_zero else ''
    by_image = ', by image' if delta.interval == 'images' else ''
    return f'{delta.mean:+.1f} [{delta.ci95_low:+.1f}, {delta.ci95_high:+.1f}] (n={delta.n}{by_image}){star}'


def interval_text(summary: Summary) -> str:
    """The tooltip of a cell: its 95 % interval and what it is over."""
    if summary.ci95_low is None:
        return ''
    std = '' if summary.std is None else f', std {summary.std:.2f}'
    return f'mean {summary.mean:.2f}{std}, n={summary.n}, 95% CI [{summary.ci95_low:.2f}, ' \
           f'{summary.ci95_high:.2f}] over {summary.interval}'


def epochs_text(row: Row) -> str:
    return '' if row.epochs is None else str(row.epochs)


def has_cost(table: Table) -> bool:
    return any(r.pretrain_hours is not None or r.peak_mem_MB is not None for r in table.rows)


def table_header(table: Table, measured: bool) -> List[str]:
    head = ['backbone' if measured else 'model', 'pretraining', 'epochs', 'params (M)', 'GFLOPs']
    head += [c.label for c in table.columns]
    if measured and has_cost(table):
        head += COST_HEADER
    if measured:
        head.append('runs')
    elif any(r.note for r in table.rows):
        head.append('note')
    return head


def is_text(index: int, header: List[str]) -> bool:
    return index < 2 or header[index] == 'note'


def row_cells(table: Table, row: Row, measured: bool, links=None) -> List[Tuple[str, bool, str]]:
    """(text, best, tooltip) per cell of ``row``, in :func:`table_header`'s order; a cell linked to a paper row
    (``links``: :func:`~vitbench.results.reproduction.links_by_cell`) is followed by the paper's value and Δ."""
    cells = [(row.backbone, False, ''), (row.recipe, False, ''), (epochs_text(row), False, ''),
             (fmt_cost(row.params_M), False, ''), (fmt_cost(row.gflops), False, '')]
    for c in table.columns:
        summary = row.stats.get(c)
        if summary is None:  # a paper row, or no value
            cells.append((fmt_metric(row.values.get(c)), False, ''))
        else:
            link = (links or {}).get((id(row), c))
            tooltip = '; '.join(t for t in (interval_text(summary), link and f'paper: {link.source}') if t)
            conflict = row.conflicts.get(c)
            cells.append((fmt_summary(summary) + fmt_reported(link) + (f' (conflict: {conflict})' if conflict else ''),
                          measured and table.is_best(row, c), tooltip))
    if measured and has_cost(table):
        cells += [(fmt_cost(v), False, '') for v in (row.pretrain_hours, row.total_hours, row.peak_mem_MB)]
    if measured:
        cells.append((str(len(row.runs)), False, ''))
    elif any(r.note for r in table.rows):
        cells.append((row.note, False, ''))
    return cells


def delta_header(deltas: Deltas, table: Table) -> List[str]:
    return ['backbone', 'pretraining', 'epochs', 'vs', *[f'Δ {c.label}' for c in table.columns]]


def delta_rows(deltas: Deltas, table: Table) -> List[List[Tuple[str, bool]]]:
    """Per compared row: (text, significant) cells in :func:`delta_header`'s order."""
    rows = []
    for i, (row, partner) in enumerate(deltas.pairs):
        vs = partner.recipe if deltas.by == 'recipe' else partner.backbone
        cells = [(row.backbone, False), (row.recipe, False), (epochs_text(row), False), (vs, False)]
        cells += [(fmt_delta(deltas.of(i, c)), bool(deltas.of(i, c) and deltas.of(i, c).excludes_zero))
                  for c in table.columns]
        rows.append(cells)
    return rows


def conflict_lines(table: Table, relative) -> List[str]:
    lines = []
    for c in table.conflicts:
        backbone, recipe, epochs = c.row
        runs = '; '.join(f'{fmt_metric(e.value)} in {relative(e.path)}' + (f' ({e.created})' if e.created else '')
                         for e in c.entries)
        seed = '' if c.seed is None else f' (seed {c.seed})'
        lines.append(f'{backbone} / {recipe} / {"" if epochs is None else epochs} epochs, {c.column.label}{seed}: '
                     f'{runs}. Used: {fmt_metric(c.entries[0].value)} (the newest).')
    return lines


def where_text(sources: Sequence[str], code) -> str:
    """' under `a`, `b`', or for many folders ' under 19 folders in `work_dirs/demo`'."""
    if not sources:
        return ''
    if len(sources) <= 3:
        return ' under ' + ', '.join(code(s) for s in sources)
    try:
        return f' under {len(sources)} folders in {code(osp.commonpath(list(sources)))}'
    except ValueError:  # absolute and relative paths mixed
        return f' under {len(sources)} folders'


def relative_path(path: str) -> str:
    rel = osp.relpath(path)
    return path if rel.startswith('..') else rel


FAILED_TITLE = 'Failed and diverged runs (in no row)'
FAILED_INTRO = ('Runs that stopped before their end (result.json "status": "diverged": the loss stopped being '
                'finite). They give no number, and their cost is in no row.')
SPLIT_TITLE = 'Cells split by experiment'
SPLIT_INTRO = ('Runs of one row and column that are not the same experiment (another protocol or digest of its '
               'settings, another schedule as run, another evaluation set) are never averaged: each fills its own '
               'column.')


def failed_lines(table: Table) -> List[str]:
    """One line per run that stopped with a non-finite loss: row, task, where, and its result.json."""
    return list(table.failed)


def rank_header(ranking: Ranking) -> List[str]:
    return ['rank', 'backbone', 'pretraining', 'epochs', 'mean z [95 %]',
            *[f'P(rank {k})' for k in range(1, len(ranking.ranked) + 1)], '≈ best']


def rank_rows(ranking: Ranking) -> List[List[str]]:
    return [[str(r.rank), r.row.backbone, r.row.recipe, epochs_text(r.row),
             f'{r.mean_z:+.2f} [{r.ci95[0]:+.2f}, {r.ci95[1]:+.2f}]',
             *[f'{p:.2f}' for p in r.rank_probability], 'yes' if r.tied_with_best else 'no'] for r in ranking.ranked]


def rank_notes(ranking: Ranking) -> List[str]:
    """The legend, the columns ranked over, and what was left out; for a board that cannot be ranked honestly,
    why."""
    if ranking.refused:
        return [f'Not ranked: {ranking.refused}.',
                'Columns: ' + ', '.join(f'{c.label} ({column_key(c)})' for c in ranking.columns) + '.']
    what = ranking.resampled.replace('+', ' and ') or 'nothing to resample: no per-image results or seeds'
    notes = [RANK_LEGEND.format(resamples=ranking.resamples, what=what),
             'Columns: ' + ', '.join(f'{c.label} ({column_key(c)})' for c in ranking.columns) + '.']
    if ranking.dropped:
        notes.append('Left out, since not every row has them (pick columns with --aggregate): '
                     + ', '.join(c.label for c in ranking.dropped) + '.')
    notes += [f'Not ranked: {row.backbone} / {row.recipe} / {epochs_text(row) or "-"}: no '
              + ', '.join(c.label for c in lacks) + '.' for row, lacks in ranking.missing]
    return notes


