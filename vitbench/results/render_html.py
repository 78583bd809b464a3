"""The leaderboard as one self-contained HTML page: tables (sorting and filtering in the browser,
:mod:`vitbench.results.html_interactive`), the warnings, and the plots as base64 PNG. A researcher reads it at a
glance: the downstream columns first, grouped per task, every table in a scroll box whose header and first column
stay in view, each number's interval on a second line in small type (or in its tooltip), the robustness columns
folded away (:func:`render_html`)."""
import base64
import html
from dataclasses import replace
from typing import List, Optional, Sequence, Tuple

from .baseline import Deltas
from .column_groups import ROBUSTNESS_TITLE, Group, column_groups
from .columns import Column
from .html_interactive import CSS as INTERACTIVE_CSS
from .html_interactive import MEASURED_ID, filter_box, script
from .plain_text import neutralize
from .rank import Ranking
from .render_text import (DELTA_LEGEND, FAILED_INTRO, FAILED_TITLE, LAYOUT_LEGEND, LEGEND, PAPER_INTRO, SPLIT_INTRO,
                          SPLIT_TITLE, TOOLTIP_LEGEND, conflict_lines, delta_header, delta_rows, failed_lines, is_text,
                          rank_header, rank_notes, rank_rows, relative_path, row_cells, table_header, where_text)
from .reproduction import html_section, links_by_cell, match_reported
from .table import Table


_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: separate; border-spacing: 0; margin: 0; font-size: 0.9em; }
th, td { border: solid #ccc; border-width: 0 1px 1px 0; padding: 0.25em 0.6em; background: #fff; }
tr > :first-child { border-left-width: 1px; }
thead tr:first-child > * { border-top-width: 1px; }
th { background: #f0f0f0; }
td.num, td:first-child, td:nth-child(2) { white-space: nowrap; }
td.note { min-width: 16em; max-width: 40em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #e3f4e3; }
td.significant { background: #e3ecf8; }
td .ci { display: block; font-size: 0.78em; color: #555; }
td .ci:empty { display: none; }
td.tip { text-decoration: underline dotted #999; cursor: help; }
.scroll { overflow: auto; max-width: 100%; max-height: 85vh; margin: 0.5em 0 1.5em; border-right: 1px solid #eee; }
.scroll thead { position: sticky; top: 0; z-index: 2; }
.scroll tr > :first-child { position: sticky; left: 0; z-index: 1; }
.scroll thead tr > :first-child { z-index: 3; }
.scroll tbody th, .scroll tbody td:first-child { background: #fafafa; }
.scroll tbody td.best:first-child { background: #e3f4e3; }
thead th { max-width: 9em; white-space: normal; vertical-align: bottom; }
thead tr.groups th { max-width: none; text-align: center; background: #e6e6e6; font-weight: 600; vertical-align: middle; }
thead tr.groups th.empty { background: #f0f0f0; }
details.robustness { margin: 0 0 1.5em; }
details.robustness summary { cursor: pointer; font-weight: 600; margin-bottom: 0.5em; }
section.paper { border-top: 3px solid #888; margin-top: 2em; }
section.paper table th { background: #f4f0e6; }
.warning { color: #8a4b00; }
p.plot-note { color: #555; font-size: 0.9em; }
img { max-width: 100%; margin: 0.5em 1em 1em 0; }
"""

INTERVALS = ('line', 'tooltip')  # where a cell's interval goes: a second line in small type, or its tooltip


def _split(text: str) -> Tuple[str, str]:
    """A number cell's value and what follows it (its interval, n, the paper's number, a conflict): '82.6 [80.1,
    84.9] (paper 83.1, Δ -0.5)' → ('82.6', '[80.1, 84.9] (paper 83.1, Δ -0.5)'); a Δ's significance star stays
    with its value."""
    value, _, rest = text.partition(' ')
    if rest.endswith(' *'):
        value, rest = value + ' *', rest[:-2]
    return value, rest


def _td(text: str, classes: List[str], tooltip: str, best: bool, intervals: str) -> str:
    """A cell; a number cell's details on a second line (``intervals='line'``: a space before it, so that the
    cell's text, which the page sorts and filters by, reads as in the other formats) or in its tooltip."""
    e = html.escape
    if 'num' in classes:
        value, rest = _split(text)
    else:
        value, rest = text, ''
    if rest and intervals == 'tooltip':  # dotted: hover for the rest
        tooltip = '; '.join(t for t in (text, tooltip) if t)
        classes = classes + ['tip']
    inner = f'<strong>{e(value)}</strong>' if best else e(value)
    if rest and intervals == 'line':
        inner += f' <span class="ci">{e(rest)}</span>'
    title = f' title="{e(tooltip)}"' if tooltip else ''
    cls = f' class="{" ".join(classes)}"' if classes else ''
    return f'<td{cls}{title}>{inner}</td>'


def _group_row(spans: Sequence[Tuple[str, int]]) -> str:
    """The header line above the column names: each group's title over its columns."""
    e = html.escape
    return '<tr class="groups">' + ''.join(
        f'<th colspan="{n}">{e(title)}</th>' if title else f'<th class="empty" colspan="{n}"></th>'
        for title, n in spans) + '</tr>'


def _spans(head: List[str], groups: Sequence[Group], lead: int) -> List[Tuple[str, int]]:
    """(title, width) over ``head``: the first column alone (it stays in view), the row's other ``lead`` - 1
    columns, each group, and what follows (cost, runs, note)."""
    spans = [('', 1), ('', lead - 1)] + [(g.title, len(g.columns)) for g in groups]
    rest = len(head) - sum(n for _, n in spans)
    return spans + ([('', rest)] if rest else [])


def _scroll(table_html: str) -> str:
    """A table in its own scroll box: a wide table scrolls there, with its header and first column in view."""
    return f'<div class="scroll">{table_html}</div>'


def _html_table(table: Table, measured: bool, links=None, table_id: str = '', groups: Sequence[Group] = (),
                intervals: str = 'line') -> str:
    e = html.escape
    head_names = table_header(table, measured)
    head = ''.join(f'<th>{e(h)}</th>' for h in head_names)
    group_row = _group_row(_spans(head_names, groups, 5)) if groups else ''
    body = []
    for row in table.rows:
        tds = []
        for i, (text, best, tooltip) in enumerate(row_cells(table, row, measured, links)):
            kind = ('note' if head_names[i] == 'note' else '') if is_text(i, head_names) else 'num'
            classes = ([kind] if kind else []) + (['best'] if best else [])
            tds.append(_td(text, classes, tooltip, best, intervals))
        body.append('<tr>' + ''.join(tds) + '</tr>')
    ident = f' id="{e(table_id)}"' if table_id else ''
    return _scroll(f'<table{ident}><thead>{group_row}<tr class="columns">{head}</tr></thead><tbody>\n'
                   + '\n'.join(body) + '\n</tbody></table>')


def _html_deltas(deltas: Deltas, table: Table, groups: Sequence[Group], intervals: str, table_id: str) -> str:
    e = html.escape
    head_names = delta_header(deltas, table)
    head = ''.join(f'<th>{e(h)}</th>' for h in head_names)
    group_row = _group_row(_spans(head_names, groups, 4)) if groups else ''
    body = []
    for cells in delta_rows(deltas, table):
        if not any(t for t, _ in cells[4:]):  # a row with no Δ in these columns
            continue
        tds = [_td(t, ['num', 'significant'] if sig else (['num'] if i >= 4 else []), '', sig, intervals)
               for i, (t, sig) in enumerate(cells)]
        body.append('<tr>' + ''.join(tds) + '</tr>')
    return _scroll(f'<table id="{e(table_id)}"><thead>{group_row}<tr class="columns">{head}</tr></thead><tbody>\n'
                   + '\n'.join(body) + '\n</tbody></table>')


def _view(table: Table, columns: Sequence[Column]) -> Table:
    """``table`` with these columns only (its best values are still its own rows')."""
    return replace(table, columns=list(columns))


def _rows_with(table: Table, columns: Sequence[Column]) -> Table:
    """``table``'s rows that have a value in one of ``columns``, with those columns only."""
    return replace(table, rows=[r for r in table.rows if any(c in r.cells for c in columns)], columns=list(columns))


def _html_ranking(ranking: Ranking, intervals: str) -> str:
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in rank_header(ranking))
    body = ['<tr>' + ''.join(_td(t, [] if i in (1, 2) else ['num'], '', False, intervals)
                             for i, t in enumerate(cells)) + '</tr>' for cells in rank_rows(ranking)]
    notes = ''.join(f'<p>{e(n)}</p>' for n in rank_notes(ranking))
    if ranking.refused:  # a board that cannot be ranked honestly says so, with no table
        return f'<h2>Cross-task rank</h2>{notes}'
    return (f'<h2>Cross-task rank</h2>{notes}' + _scroll(f'<table id="rank"><thead><tr>{head}</tr></thead><tbody>\n'
                                                        + '\n'.join(body) + '\n</tbody></table>'))


def _img(title: str, png: bytes) -> str:
    data = base64.b64encode(png).decode('ascii')
    return f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{data}"></figure>'


def render_html(measured: Table, paper: Sequence[Table], sources: Sequence[str] = (), plots: bool = True,
                deltas: Optional[Deltas] = None, figures: Sequence[Tuple[str, bytes]] = (),
                ranking: Optional[Ranking] = None, intervals: str = 'line', benchmarks: Sequence = ()) -> str:
    """The page. The measured table shows the downstream tasks' columns first, a group per task, then the other
    tasks' own (ImageNet top-1); the robustness and calibration columns have a table of their own, folded
    (:mod:`vitbench.results.column_groups`). Every table scrolls in its own box, its header and first column in
    view. ``intervals``: 'line' puts a number's interval (and n, the paper's number) on a second line in small type,
    'tooltip' in the cell's tooltip only."""
    if intervals not in INTERVALS:
        raise ValueError(f'unknown intervals={intervals!r}; expected one of {INTERVALS}')
    return neutralize(_page(measured, paper, sources, plots, deltas, figures, ranking, intervals, benchmarks))


def _page(measured, paper, sources, plots, deltas, figures, ranking, intervals, benchmarks=()) -> str:
    from .plots import delta_plot, measured_figures, paper_plots
    e = html.escape
    n_runs = len({p for r in measured.rows for p in r.runs})
    where = where_text(sources, lambda s: f'<code>{e(s)}</code>')
    groups, robust = column_groups(measured.columns)
    main = _view(measured, [c for g in groups for c in g.columns])
    parts = ['<!DOCTYPE html>', '<html><head><meta charset="utf-8"><title>vitbench leaderboard</title>',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f'<style>{_CSS}{INTERACTIVE_CSS}</style></head><body>', '<h1>vitbench leaderboard</h1>', filter_box(),
             '<section class="measured"><h2>Measured</h2>', f'<p>{n_runs} runs (result.json){where}. {e(LEGEND)} '
             f'{e(LAYOUT_LEGEND if intervals == "line" else TOOLTIP_LEGEND)}</p>']
    links, mismatches = match_reported(measured, paper)
    by_cell = links_by_cell(links)
    parts.append(_html_table(main, True, by_cell, MEASURED_ID, groups, intervals) if measured.rows else
                 '<p>(no result.json found)</p>')
    if robust and measured.rows:
        side = _rows_with(measured, robust)
        parts.append(f'<details class="robustness" id="robustness-details"><summary>{e(ROBUSTNESS_TITLE)}: '
                     f'{len(robust)} columns, {len(side.rows)} of {len(measured.rows)} rows (click to show)</summary>'
                     + _html_table(side, True, by_cell, 'robustness', [Group(ROBUSTNESS_TITLE, tuple(robust))],
                                   intervals) + '</details>')
    if links or mismatches:
        parts.append(html_section(links, mismatches))
    if deltas is not None:
        parts.append(f'<h2>Δ vs {e(deltas.baseline)} (paired by seed)</h2><p>{e(DELTA_LEGEND)}</p>')
        parts.append(_html_deltas(deltas, main, groups, intervals, 'deltas'))
        if robust and any(deltas.of(i, c) for i in range(len(deltas.pairs)) for c in robust):
            parts.append(f'<details class="robustness"><summary>Δ, {e(ROBUSTNESS_TITLE.lower())} (click to show)'
                         '</summary>' + _html_deltas(deltas, _view(measured, robust),
                                                     [Group(ROBUSTNESS_TITLE, tuple(robust))], intervals,
                                                     'deltas-robustness') + '</details>')
        if plots and deltas.values:
            parts.append(_img(*delta_plot(deltas, measured)))
    if ranking is not None:
        parts.append(_html_ranking(ranking, intervals))
    if measured.conflicts:
        parts.append('<h2 class="warning">Warnings: conflicting duplicate runs</h2>'
                     '<p>The same cell is filled by runs that disagree:</p><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in conflict_lines(measured, relative_path)]
        parts.append('</ul>')
    if measured.splits:
        parts.append(f'<h2 class="warning">{e(SPLIT_TITLE)}</h2><p>{e(SPLIT_INTRO)}</p><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in measured.splits]
        parts.append('</ul>')
    if measured.failed:
        parts.append(f'<h2 class="warning">{e(FAILED_TITLE)}</h2><p>{e(FAILED_INTRO)}</p><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in failed_lines(measured)]
        parts.append('</ul>')
    if measured.rejected:
        parts.append('<h2 class="warning">Result files left out</h2><ul>')
        parts += [f'<li class="warning">{e(message)}</li>' for message in measured.rejected]
        parts.append('</ul>')
    if plots and measured.rows:
        from .seed_plots import seed_plots  # the seed study's histograms (thesis Figures 6.7, 6.8)
        charts, skipped = measured_figures(measured)
        charts += seed_plots(measured)
        if charts or skipped:
            parts.append('<h2>Plots</h2>')
            parts += [f'<p class="plot-note">{e(note)}</p>' for note in skipped]
            parts += [_img(title, png) for title, png in charts]
    if figures:  # made by other stages (e.g. tools/analyze.py), embedded so that the page stands alone
        parts.append('<h2>Figures</h2>')
        parts += [f'<h3><code>{e(title)}</code></h3>' + _img(title, png) for title, png in figures]
    if benchmarks:  # tools/benchmark.py's records: measured ratios beside the paper's
        from .benchmark_record import html_section as benchmark_section
        parts.append(benchmark_section(benchmarks))
    parts.append('</section>')
    if paper:
        parts += ['<section class="paper"><h2>Paper reference results (not measured here)</h2>',
                  f'<p>{e(PAPER_INTRO)}</p>']
        for table in paper:
            parts.append(f'<h3>{e(table.title)}</h3>')
            if table.note:
                parts.append(f'<p>{e(table.note)}</p>')
            parts.append(_html_table(table, False, table_id=f'paper-{table.id}' if table.id else '',
                                     intervals=intervals))
        if plots:
            parts += [_img(title, png) for title, png in paper_plots(paper)]
        parts.append('</section>')
    parts += [script(), '</body></html>']
    return '\n'.join(parts) + '\n'
