"""Writing the leaderboard: Markdown, CSV or a self-contained HTML page (tables + base64 PNG plots; its tables sort
and filter in the browser, :mod:`vitbench.results.html_interactive`).

Every format keeps the measured table and the paper reference tables apart: Markdown and HTML in their own
sections, CSV in a ``section`` column (``measured`` rows first, then ``paper: <table id>``). A cell measured
over several seeds reads ``mean ± std (n=k)`` (the 95 % interval in the HTML tooltip and in the CSV); with a
``baseline``, the paired Δ of every row against it follows the measured table. A measured cell that is the same
experiment as a paper row (:mod:`vitbench.results.reproduction`) reads ``value (paper X, Δ d)``, and a "Reported
vs reproduced" table lists those cells with their sources. The cross-task rank ends the Markdown and HTML
pages and fills a ``rank ...`` group of CSV columns.
"""
import base64
import csv
import html
import io
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

from vitbench.fileio import atomic_write_text

from .baseline import Deltas, paired_deltas
from .rank import Ranking, column_key, cross_task_rank
from .html_interactive import CSS as INTERACTIVE_CSS
from .html_interactive import MEASURED_ID, filter_box, script
from .reproduction import (CSV_FIELDS, csv_cells, fmt_reported, html_section, links_by_cell, match_reported,
                           markdown_section)
from .stats import Summary
from .table import Column, Row, Table

FORMATS = ('md', 'csv', 'html')
LEGEND = ('Bold: best value of its column (higher is better, lower for mCE and ECE; columns with at least two '
          'values). '
          'Empty cell: not measured. Params and GFLOPs: the backbone alone, at its own resolution. '
          'mean ± std (n=k): k runs with different seeds (sample std). '
          '[a, b]: one run\'s 95 % interval over its test images, a percentile bootstrap of its per-image results '
          '(1,000 resamples). '
          'Device-hours (dev-h): wall time × devices, of the pre-training and of everything the row ran.')
DELTA_LEGEND = ('Δ: mean over the seeds both rows ran of (row − baseline), seed by seed, with its 95 % confidence '
                'interval (Student t); "by image": one run each, both with per-image results: the interval is a '
                'paired bootstrap over the test images they share; * marks a Δ whose interval excludes 0.')
RANK_LEGEND = ('Per column, z = (value − mean of the rows) / std of the rows (Battle of the Backbones); mean z over '
               'the columns below. The 95 % interval and the rank probabilities come from {resamples:,} bootstrap '
               'resamples ({what}), all rows drawn on the same images. ≈ best: cannot be told apart from the best '
               'row (the interval of its difference in mean z includes 0).')
COST_HEADER = ['pretrain dev-h', 'total dev-h', 'peak mem (MB)']
PAPER_INTRO = ('Numbers copied from the papers (vitbench/results/paper_results.yaml), one table per source table. '
               'They are references, not runs of this suite, and are never mixed with the measured rows.')


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


def _interval(summary: Summary) -> str:
    """The tooltip of a cell: its 95 % interval and what it is over."""
    if summary.ci95_low is None:
        return ''
    std = '' if summary.std is None else f', std {summary.std:.2f}'
    return f'mean {summary.mean:.2f}{std}, n={summary.n}, 95% CI [{summary.ci95_low:.2f}, ' \
           f'{summary.ci95_high:.2f}] over {summary.interval}'


def _epochs(row: Row) -> str:
    return '' if row.epochs is None else str(row.epochs)


def _has_cost(table: Table) -> bool:
    return any(r.pretrain_hours is not None or r.peak_mem_MB is not None for r in table.rows)


def _header(table: Table, measured: bool) -> List[str]:
    head = ['backbone' if measured else 'model', 'pretraining', 'epochs', 'params (M)', 'GFLOPs']
    head += [c.label for c in table.columns]
    if measured and _has_cost(table):
        head += COST_HEADER
    if measured:
        head.append('runs')
    elif any(r.note for r in table.rows):
        head.append('note')
    return head


def _is_text(index: int, header: List[str]) -> bool:
    return index < 2 or header[index] == 'note'


def _cells(table: Table, row: Row, measured: bool, links=None) -> List[Tuple[str, bool, str]]:
    """(text, best, tooltip) per cell of ``row``, in :func:`_header`'s order; a cell linked to a paper row
    (``links``: :func:`~vitbench.results.reproduction.links_by_cell`) is followed by the paper's value and Δ."""
    cells = [(row.backbone, False, ''), (row.recipe, False, ''), (_epochs(row), False, ''),
             (fmt_cost(row.params_M), False, ''), (fmt_cost(row.gflops), False, '')]
    for c in table.columns:
        summary = row.stats.get(c)
        if c in row.diverged:  # its run stopped with a non-finite loss: no number to show
            cells.append(('diverged', False, row.diverged[c]))
        elif summary is None:  # a paper row, or no value
            cells.append((fmt_metric(row.values.get(c)), False, ''))
        else:
            link = (links or {}).get((id(row), c))
            tooltip = '; '.join(t for t in (_interval(summary), link and f'paper: {link.source}') if t)
            cells.append((fmt_summary(summary) + fmt_reported(link), measured and table.is_best(row, c), tooltip))
    if measured and _has_cost(table):
        cells += [(fmt_cost(v), False, '') for v in (row.pretrain_hours, row.total_hours, row.peak_mem_MB)]
    if measured:
        cells.append((str(len(row.runs)), False, ''))
    elif any(r.note for r in table.rows):
        cells.append((row.note, False, ''))
    return cells


def _delta_header(deltas: Deltas, table: Table) -> List[str]:
    return ['backbone', 'pretraining', 'epochs', 'vs', *[f'Δ {c.label}' for c in table.columns]]


def _delta_rows(deltas: Deltas, table: Table) -> List[List[Tuple[str, bool]]]:
    """Per compared row: (text, significant) cells in :func:`_delta_header`'s order."""
    rows = []
    for i, (row, partner) in enumerate(deltas.pairs):
        vs = partner.recipe if deltas.by == 'recipe' else partner.backbone
        cells = [(row.backbone, False), (row.recipe, False), (_epochs(row), False), (vs, False)]
        cells += [(fmt_delta(deltas.of(i, c)), bool(deltas.of(i, c) and deltas.of(i, c).excludes_zero))
                  for c in table.columns]
        rows.append(cells)
    return rows


def _conflict_lines(table: Table, relative) -> List[str]:
    lines = []
    for c in table.conflicts:
        backbone, recipe, epochs = c.row
        runs = '; '.join(f'{fmt_metric(e.value)} in {relative(e.path)}' + (f' ({e.created})' if e.created else '')
                         for e in c.entries)
        seed = '' if c.seed is None else f' (seed {c.seed})'
        lines.append(f'{backbone} / {recipe} / {"" if epochs is None else epochs} epochs, {c.column.label}{seed}: '
                     f'{runs}. Used: {fmt_metric(c.entries[0].value)} (the newest).')
    return lines


def _where(sources: Sequence[str], code) -> str:
    """' under `a`, `b`', or for many folders ' under 19 folders in `work_dirs/demo`'."""
    if not sources:
        return ''
    if len(sources) <= 3:
        return ' under ' + ', '.join(code(s) for s in sources)
    try:
        return f' under {len(sources)} folders in {code(osp.commonpath(list(sources)))}'
    except ValueError:  # absolute and relative paths mixed
        return f' under {len(sources)} folders'


def _relative(path: str) -> str:
    rel = osp.relpath(path)
    return path if rel.startswith('..') else rel


def diverged_lines(table: Table) -> List[str]:
    """One line per cell whose run stopped with a non-finite loss: row, column and where."""
    return [f'{row.backbone} / {row.recipe} / {_epochs(row) or "-"} epochs, {column.label}: {where}'
            for row in table.rows for column, where in row.diverged.items()]


# ---------------------------------------------------------------------------------------------- markdown

def _md_cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _md_table(table: Table, measured: bool, links=None) -> List[str]:
    head = _header(table, measured)
    lines = ['| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if _is_text(i, head) else '---:' for i in range(len(head))) + '|']
    for row in table.rows:
        cells = [f'**{text}**' if best else text for text, best, _ in _cells(table, row, measured, links)]
        lines.append('| ' + ' | '.join(map(_md_cell, cells)) + ' |')
    return lines


def _md_deltas(deltas: Deltas, table: Table) -> List[str]:
    head = _delta_header(deltas, table)
    lines = [f'## Δ vs {deltas.baseline} (paired by seed)', '', DELTA_LEGEND, '',
             '| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if i < 2 or i == 3 else '---:' for i in range(len(head))) + '|']
    for cells in _delta_rows(deltas, table):
        lines.append('| ' + ' | '.join(_md_cell(text) for text, _ in cells) + ' |')  # the star marks it
    return lines


def _rank_header(ranking: Ranking) -> List[str]:
    return ['rank', 'backbone', 'pretraining', 'epochs', 'mean z [95 %]',
            *[f'P(rank {k})' for k in range(1, len(ranking.ranked) + 1)], '≈ best']


def _rank_rows(ranking: Ranking) -> List[List[str]]:
    return [[str(r.rank), r.row.backbone, r.row.recipe, _epochs(r.row),
             f'{r.mean_z:+.2f} [{r.ci95[0]:+.2f}, {r.ci95[1]:+.2f}]',
             *[f'{p:.2f}' for p in r.rank_probability], 'yes' if r.tied_with_best else 'no'] for r in ranking.ranked]


def _rank_notes(ranking: Ranking) -> List[str]:
    """The legend, the columns ranked over, and what was left out."""
    what = ranking.resampled.replace('+', ' and ') or 'nothing to resample: no per-image results or seeds'
    notes = [RANK_LEGEND.format(resamples=ranking.resamples, what=what),
             'Columns: ' + ', '.join(f'{c.label} ({column_key(c)})' for c in ranking.columns) + '.']
    if ranking.dropped:
        notes.append('Left out, since not every row has them (pick columns with --aggregate): '
                     + ', '.join(c.label for c in ranking.dropped) + '.')
    notes += [f'Not ranked: {row.backbone} / {row.recipe} / {_epochs(row) or "-"}: no '
              + ', '.join(c.label for c in lacks) + '.' for row, lacks in ranking.missing]
    return notes


def _md_ranking(ranking: Ranking) -> List[str]:
    head = _rank_header(ranking)
    lines = ['## Cross-task rank', '', *[f'{n}\n' for n in _rank_notes(ranking)],
             '| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if i in (1, 2) else '---:' for i in range(len(head))) + '|']
    lines += ['| ' + ' | '.join(map(_md_cell, cells)) + ' |' for cells in _rank_rows(ranking)]
    return lines


def render_markdown(measured: Table, paper: Sequence[Table], sources: Sequence[str] = (),
                    deltas: Optional[Deltas] = None, figures: Sequence[Tuple[str, bytes]] = (),
                    ranking: Optional[Ranking] = None) -> str:
    out = ['# vitbench leaderboard', '', '## Measured', '']
    n_runs = len({p for r in measured.rows for p in r.runs})
    out.append(f'{n_runs} runs (result.json){_where(sources, lambda s: f"`{s}`")}. {LEGEND}')
    out.append('')
    links, mismatches = match_reported(measured, paper)
    out += _md_table(measured, True, links_by_cell(links)) if measured.rows else ['(no result.json found)']
    if links or mismatches:
        out += [''] + markdown_section(links, mismatches)
    if deltas is not None:
        out += [''] + _md_deltas(deltas, measured)
    if ranking is not None:
        out += [''] + _md_ranking(ranking)
    if measured.conflicts:
        out += ['', '## Warnings: conflicting duplicate runs', '',
                'The same cell is filled by runs that disagree:', '']
        out += [f'- {line}' for line in _conflict_lines(measured, _relative)]
    if any(row.diverged for row in measured.rows):
        out += ['', '## Diverged runs (no number)', '']
        out += [f'- {line}' for line in diverged_lines(measured)]
    if measured.rejected:
        out += ['', '## Result files left out', '']
        out += [f'- {_md_cell(message)}' for message in measured.rejected]
    if figures:
        out += ['', '## Figures', ''] + [f'- `{title}`' for title, _ in figures]
    if paper:
        out += ['', '## Paper reference results (not measured here)', '', PAPER_INTRO]
        for table in paper:
            out += ['', f'### {table.title}', '']
            if table.note:
                out += [table.note, '']
            out += _md_table(table, False)
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------------------------------------- csv

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
    writer = _SafeCsvWriter(buf)
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
        if column in row.diverged:
            return ['diverged', '', '', '', '', '']
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
            writer.writerow([section, row.backbone, row.recipe, _epochs(row), number(row.params_M),
                             number(row.gflops), *[v for c in columns for v in stats_of(row, c)], *delta_cells,
                             *reported_cells, *(rank_cells.get(id(row), no_rank) if is_measured else no_rank),
                             number(row.pretrain_hours), number(row.total_hours), number(row.peak_mem_MB),
                             len(row.runs) if is_measured else '', '; '.join(best), row.note])
    return buf.getvalue()


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
    return cells


class _SafeCsvWriter:
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


# ---------------------------------------------------------------------------------------------- html

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #e3f4e3; }
td.significant { background: #e3ecf8; }
section.paper { border-top: 3px solid #888; margin-top: 2em; }
section.paper table th { background: #f4f0e6; }
.warning { color: #8a4b00; }
img { max-width: 100%; margin: 0.5em 1em 1em 0; }
"""


def _html_table(table: Table, measured: bool, links=None, table_id: str = '') -> str:
    e = html.escape
    head_names = _header(table, measured)
    head = ''.join(f'<th>{e(h)}</th>' for h in head_names)
    body = []
    for row in table.rows:
        tds = []
        for i, (text, best, tooltip) in enumerate(_cells(table, row, measured, links)):
            classes = ' '.join(([] if _is_text(i, head_names) else ['num']) + (['best'] if best else []))
            inner = f'<strong>{e(text)}</strong>' if best else e(text)
            title = f' title="{e(tooltip)}"' if tooltip else ''
            tds.append(f'<td class="{classes}"{title}>{inner}</td>' if classes else f'<td{title}>{inner}</td>')
        body.append('<tr>' + ''.join(tds) + '</tr>')
    ident = f' id="{e(table_id)}"' if table_id else ''
    return f'<table{ident}><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>'


def _html_deltas(deltas: Deltas, table: Table) -> str:
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in _delta_header(deltas, table))
    body = []
    for cells in _delta_rows(deltas, table):
        tds = [f'<td class="num significant"><strong>{e(t)}</strong></td>' if sig else
               (f'<td class="num">{e(t)}</td>' if i >= 4 else f'<td>{e(t)}</td>') for i, (t, sig) in enumerate(cells)]
        body.append('<tr>' + ''.join(tds) + '</tr>')
    return (f'<h2>Δ vs {e(deltas.baseline)} (paired by seed)</h2><p>{e(DELTA_LEGEND)}</p>'
            f'<table id="deltas"><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>')


def _html_ranking(ranking: Ranking) -> str:
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in _rank_header(ranking))
    body = ['<tr>' + ''.join(f'<td>{e(t)}</td>' if i in (1, 2) else f'<td class="num">{e(t)}</td>'
                             for i, t in enumerate(cells)) + '</tr>' for cells in _rank_rows(ranking)]
    notes = ''.join(f'<p>{e(n)}</p>' for n in _rank_notes(ranking))
    return (f'<h2>Cross-task rank</h2>{notes}<table id="rank"><thead><tr>{head}</tr></thead><tbody>\n'
            + '\n'.join(body) + '\n</tbody></table>')


def _img(title: str, png: bytes) -> str:
    data = base64.b64encode(png).decode('ascii')
    return f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{data}"></figure>'


def render_html(measured: Table, paper: Sequence[Table], sources: Sequence[str] = (), plots: bool = True,
                deltas: Optional[Deltas] = None, figures: Sequence[Tuple[str, bytes]] = (),
                ranking: Optional[Ranking] = None) -> str:
    from .plots import delta_plot, measured_plots, paper_plots
    e = html.escape
    n_runs = len({p for r in measured.rows for p in r.runs})
    where = _where(sources, lambda s: f'<code>{e(s)}</code>')
    parts = ['<!DOCTYPE html>', '<html><head><meta charset="utf-8"><title>vitbench leaderboard</title>',
             f'<style>{_CSS}{INTERACTIVE_CSS}</style></head><body>', '<h1>vitbench leaderboard</h1>', filter_box(),
             '<section class="measured"><h2>Measured</h2>', f'<p>{n_runs} runs (result.json){where}. {e(LEGEND)}</p>']
    links, mismatches = match_reported(measured, paper)
    parts.append(_html_table(measured, True, links_by_cell(links), MEASURED_ID) if measured.rows else
                 '<p>(no result.json found)</p>')
    if links or mismatches:
        parts.append(html_section(links, mismatches))
    if deltas is not None:
        parts.append(_html_deltas(deltas, measured))
        if plots and deltas.values:
            parts.append(_img(*delta_plot(deltas, measured)))
    if ranking is not None:
        parts.append(_html_ranking(ranking))
    if measured.conflicts:
        parts.append('<h2 class="warning">Warnings: conflicting duplicate runs</h2>'
                     '<p>The same cell is filled by runs that disagree:</p><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in _conflict_lines(measured, _relative)]
        parts.append('</ul>')
    if any(row.diverged for row in measured.rows):
        parts.append('<h2 class="warning">Diverged runs (no number)</h2><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in diverged_lines(measured)]
        parts.append('</ul>')
    if measured.rejected:
        parts.append('<h2 class="warning">Result files left out</h2><ul>')
        parts += [f'<li class="warning">{e(message)}</li>' for message in measured.rejected]
        parts.append('</ul>')
    if plots and measured.rows:
        charts = measured_plots(measured)
        if charts:
            parts.append('<h2>Plots</h2>')
            parts += [_img(title, png) for title, png in charts]
    if figures:  # made by other stages (e.g. tools/analyze.py), embedded so that the page stands alone
        parts.append('<h2>Figures</h2>')
        parts += [f'<h3><code>{e(title)}</code></h3>' + _img(title, png) for title, png in figures]
    parts.append('</section>')
    if paper:
        parts += ['<section class="paper"><h2>Paper reference results (not measured here)</h2>',
                  f'<p>{e(PAPER_INTRO)}</p>']
        for table in paper:
            parts.append(f'<h3>{e(table.title)}</h3>')
            if table.note:
                parts.append(f'<p>{e(table.note)}</p>')
            parts.append(_html_table(table, False, table_id=f'paper-{table.id}' if table.id else ''))
        if plots:
            parts += [_img(title, png) for title, png in paper_plots(paper)]
        parts.append('</section>')
    parts += [script(), '</body></html>']
    return '\n'.join(parts) + '\n'


def render(fmt: str, measured: Table, paper: Sequence[Table], sources: Sequence[str] = (),
           baseline: Optional[str] = None, figures: Sequence[Tuple[str, bytes]] = (),
           aggregate: Optional[Sequence[str]] = None) -> str:
    """The leaderboard in ``fmt``; ``baseline`` (a recipe or backbone name) adds the paired Δ against it;
    ``figures`` ((title, PNG bytes) made elsewhere) are embedded in HTML and listed in Markdown. Every format
    ranks the rows across tasks (:mod:`vitbench.results.rank`) over the columns ``aggregate`` names (default: the
    downstream columns every row has): a section in Markdown and HTML, rank columns in CSV."""
    if fmt not in FORMATS:
        raise ValueError(f'unknown leaderboard format {fmt!r}; expected one of {FORMATS}')
    deltas = paired_deltas(measured, baseline) if baseline else None
    ranking = cross_task_rank(measured, aggregate)
    if fmt == 'csv':
        return render_csv(measured, paper, deltas, ranking)
    if fmt == 'md':
        return render_markdown(measured, paper, sources, deltas, figures, ranking)
    return render_html(measured, paper, sources, deltas=deltas, figures=figures, ranking=ranking)


def format_of(path: str) -> str:
    """The format a file name asks for: leaderboard.md → 'md'; errors name the file."""
    ext = osp.splitext(path)[1].lstrip('.').lower()
    ext = {'markdown': 'md', 'htm': 'html'}.get(ext, ext)
    if ext not in FORMATS:
        raise ValueError(f"cannot tell the leaderboard format of '{path}' from its extension; use .md, .csv or "
                         '.html, or pass --format')
    return ext


def write_leaderboard(runs: Sequence[str], outputs: Dict[str, str], paper: bool = True,
                      baseline: Optional[str] = None, figures: Sequence[str] = (),
                      aggregate: Optional[Sequence[str]] = None) -> Table:
    """Build the table from the result.json files under ``runs`` and write it as ``{format: path}``
    (atomically: a reader never sees half a page), with the paired Δ against ``baseline`` when given. Every
    page is rendered before the first is written, so a bad baseline leaves no file. Returns the measured
    table (its conflicts included)."""
    from .paper import load_paper_tables
    from .table import build_table
    measured = build_table(runs)
    tables = load_paper_tables() if paper else []
    pngs = []
    for path in figures:
        with open(path, 'rb') as f:
            pngs.append((path, f.read()))
    pages = {path: render(fmt, measured, tables, runs, baseline, pngs, aggregate) for fmt, path in outputs.items()}
    for path, text in pages.items():
        atomic_write_text(text, path)
    return measured

