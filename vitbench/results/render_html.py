"""The leaderboard as one self-contained HTML page: tables (sorting and filtering in the browser,
:mod:`vitbench.results.html_interactive`), the warnings, and the plots as base64 PNG."""
import base64
import html
from typing import Optional, Sequence, Tuple

from .baseline import Deltas
from .html_interactive import CSS as INTERACTIVE_CSS
from .html_interactive import MEASURED_ID, filter_box, script
from .rank import Ranking
from .render_text import (DELTA_LEGEND, FAILED_INTRO, FAILED_TITLE, LEGEND, PAPER_INTRO, SPLIT_INTRO, SPLIT_TITLE,
                          conflict_lines, delta_header, delta_rows, failed_lines, is_text, rank_header, rank_notes,
                          rank_rows, relative_path, row_cells, table_header, where_text)
from .reproduction import html_section, links_by_cell, match_reported
from .table import Table


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
    head_names = table_header(table, measured)
    head = ''.join(f'<th>{e(h)}</th>' for h in head_names)
    body = []
    for row in table.rows:
        tds = []
        for i, (text, best, tooltip) in enumerate(row_cells(table, row, measured, links)):
            classes = ' '.join(([] if is_text(i, head_names) else ['num']) + (['best'] if best else []))
            inner = f'<strong>{e(text)}</strong>' if best else e(text)
            title = f' title="{e(tooltip)}"' if tooltip else ''
            tds.append(f'<td class="{classes}"{title}>{inner}</td>' if classes else f'<td{title}>{inner}</td>')
        body.append('<tr>' + ''.join(tds) + '</tr>')
    ident = f' id="{e(table_id)}"' if table_id else ''
    return f'<table{ident}><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>'


def _html_deltas(deltas: Deltas, table: Table) -> str:
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in delta_header(deltas, table))
    body = []
    for cells in delta_rows(deltas, table):
        tds = [f'<td class="num significant"><strong>{e(t)}</strong></td>' if sig else
               (f'<td class="num">{e(t)}</td>' if i >= 4 else f'<td>{e(t)}</td>') for i, (t, sig) in enumerate(cells)]
        body.append('<tr>' + ''.join(tds) + '</tr>')
    return (f'<h2>Δ vs {e(deltas.baseline)} (paired by seed)</h2><p>{e(DELTA_LEGEND)}</p>'
            f'<table id="deltas"><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>')


def _html_ranking(ranking: Ranking) -> str:
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in rank_header(ranking))
    body = ['<tr>' + ''.join(f'<td>{e(t)}</td>' if i in (1, 2) else f'<td class="num">{e(t)}</td>'
                             for i, t in enumerate(cells)) + '</tr>' for cells in rank_rows(ranking)]
    notes = ''.join(f'<p>{e(n)}</p>' for n in rank_notes(ranking))
    if ranking.refused:  # a board that cannot be ranked honestly says so, with no table
        return f'<h2>Cross-task rank</h2>{notes}'
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
    where = where_text(sources, lambda s: f'<code>{e(s)}</code>')
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
        charts = measured_plots(measured) + seed_plots(measured)
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


