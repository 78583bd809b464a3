"""Writing the leaderboard: Markdown, CSV or a self-contained HTML page (tables + base64 PNG plots).

Every format keeps the measured table and the paper reference tables apart: Markdown and HTML in their own
sections, CSV in a ``section`` column (``measured`` rows first, then ``paper: <table id>``).
"""
import base64
import csv
import html
import io
import os.path as osp
from typing import Dict, List, Optional, Sequence, Tuple

from vitbench.fileio import atomic_write_text

from .table import Column, Row, Table

FORMATS = ('md', 'csv', 'html')
LEGEND = ('Bold: best value of its column (higher is better; columns with at least two values). '
          'Empty cell: not measured. Params and GFLOPs: the backbone alone, at its own resolution.')
PAPER_INTRO = ('Numbers copied from the papers (vitbench/results/paper_results.yaml), one table per source table. '
               'They are references, not runs of this suite, and are never mixed with the measured rows.')


def fmt_metric(value: Optional[float]) -> str:
    return '' if value is None else f'{value:.1f}'


def fmt_cost(value: Optional[float]) -> str:
    if value is None:
        return ''
    return f'{value:.0f}' if value >= 1e4 else f'{value:.4g}'


def _epochs(row: Row) -> str:
    return '' if row.epochs is None else str(row.epochs)


def _header(table: Table, measured: bool) -> List[str]:
    head = ['backbone' if measured else 'model', 'pretraining', 'epochs', 'params (M)', 'GFLOPs']
    head += [c.label for c in table.columns]
    if measured:
        head.append('runs')
    elif any(r.note for r in table.rows):
        head.append('note')
    return head


def _is_text(index: int, header: List[str]) -> bool:
    return index < 2 or header[index] == 'note'


def _cells(table: Table, row: Row, measured: bool) -> List[Tuple[str, bool]]:
    """(text, best) per cell of ``row``, in :func:`_header`'s order."""
    cells = [(row.backbone, False), (row.recipe, False), (_epochs(row), False), (fmt_cost(row.params_M), False),
             (fmt_cost(row.gflops), False)]
    cells += [(fmt_metric(row.values.get(c)), measured and table.is_best(row, c)) for c in table.columns]
    if measured:
        cells.append((str(len(row.runs)), False))
    elif any(r.note for r in table.rows):
        cells.append((row.note, False))
    return cells


def _conflict_lines(table: Table, relative) -> List[str]:
    lines = []
    for c in table.conflicts:
        backbone, recipe, epochs = c.row
        runs = '; '.join(f'{fmt_metric(e.value)} in {relative(e.path)}' + (f' ({e.created})' if e.created else '')
                         for e in c.entries)
        lines.append(f'{backbone} / {recipe} / {"" if epochs is None else epochs} epochs, {c.column.label}: '
                     f'{runs}. Shown: {fmt_metric(c.entries[0].value)} (the newest).')
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


# ---------------------------------------------------------------------------------------------- markdown

def _md_cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _md_table(table: Table, measured: bool) -> List[str]:
    head = _header(table, measured)
    lines = ['| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if _is_text(i, head) else '---:' for i in range(len(head))) + '|']
    for row in table.rows:
        cells = [f'**{text}**' if best else text for text, best in _cells(table, row, measured)]
        lines.append('| ' + ' | '.join(map(_md_cell, cells)) + ' |')
    return lines


def render_markdown(measured: Table, paper: Sequence[Table], sources: Sequence[str] = ()) -> str:
    out = ['# vitbench leaderboard', '', '## Measured', '']
    n_runs = len({p for r in measured.rows for p in r.runs})
    out.append(f'{n_runs} runs (result.json){_where(sources, lambda s: f"`{s}`")}. {LEGEND}')
    out.append('')
    out += _md_table(measured, True) if measured.rows else ['(no result.json found)']
    if measured.conflicts:
        out += ['', '## Warnings: conflicting duplicate runs', '',
                'The same cell is filled by runs that disagree:', '']
        out += [f'- {line}' for line in _conflict_lines(measured, _relative)]
    if paper:
        out += ['', '## Paper reference results (not measured here)', '', PAPER_INTRO]
        for table in paper:
            out += ['', f'### {table.title}', '']
            if table.note:
                out += [table.note, '']
            out += _md_table(table, False)
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------------------------------------- csv

def render_csv(measured: Table, paper: Sequence[Table]) -> str:
    """One header: section, backbone, pretraining, epochs, params_M, gflops, every column, runs, best, note."""
    columns: List[Column] = list(measured.columns)
    for table in paper:
        columns += [c for c in table.columns if c not in columns]
    columns.sort(key=Column.sort_key)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator='\n')
    writer.writerow(['section', 'backbone', 'pretraining', 'epochs', 'params_M', 'gflops',
                     *[c.label for c in columns], 'runs', 'best', 'note'])

    def number(value):
        return '' if value is None else f'{value:.4f}'.rstrip('0').rstrip('.')

    for section, table in [('measured', measured)] + [(f'paper: {t.id}', t) for t in paper]:
        is_measured = table is measured
        for row in table.rows:
            best = [c.label for c in table.columns if is_measured and table.is_best(row, c)]
            writer.writerow([section, row.backbone, row.recipe, _epochs(row), number(row.params_M),
                             number(row.gflops), *[number(row.values.get(c)) for c in columns],
                             len(row.runs) if is_measured else '', '; '.join(best), row.note])
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------- html

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.best { background: #e3f4e3; }
section.paper { border-top: 3px solid #888; margin-top: 2em; }
section.paper table th { background: #f4f0e6; }
.warning { color: #8a4b00; }
img { max-width: 100%; margin: 0.5em 1em 1em 0; }
"""


def _html_table(table: Table, measured: bool) -> str:
    e = html.escape
    head_names = _header(table, measured)
    head = ''.join(f'<th>{e(h)}</th>' for h in head_names)
    body = []
    for row in table.rows:
        tds = []
        for i, (text, best) in enumerate(_cells(table, row, measured)):
            classes = ' '.join(([] if _is_text(i, head_names) else ['num']) + (['best'] if best else []))
            inner = f'<strong>{e(text)}</strong>' if best else e(text)
            tds.append(f'<td class="{classes}">{inner}</td>' if classes else f'<td>{inner}</td>')
        body.append('<tr>' + ''.join(tds) + '</tr>')
    return f'<table><thead><tr>{head}</tr></thead><tbody>\n' + '\n'.join(body) + '\n</tbody></table>'


def _img(title: str, png: bytes) -> str:
    data = base64.b64encode(png).decode('ascii')
    return f'<figure><img alt="{html.escape(title)}" src="data:image/png;base64,{data}"></figure>'


def render_html(measured: Table, paper: Sequence[Table], sources: Sequence[str] = (), plots: bool = True) -> str:
    from .plots import measured_plots, paper_plots
    e = html.escape
    n_runs = len({p for r in measured.rows for p in r.runs})
    where = _where(sources, lambda s: f'<code>{e(s)}</code>')
    parts = ['<!DOCTYPE html>', '<html><head><meta charset="utf-8"><title>vitbench leaderboard</title>',
             f'<style>{_CSS}</style></head><body>', '<h1>vitbench leaderboard</h1>',
             '<section class="measured"><h2>Measured</h2>', f'<p>{n_runs} runs (result.json){where}. {e(LEGEND)}</p>']
    parts.append(_html_table(measured, True) if measured.rows else '<p>(no result.json found)</p>')
    if measured.conflicts:
        parts.append('<h2 class="warning">Warnings: conflicting duplicate runs</h2>'
                     '<p>The same cell is filled by runs that disagree:</p><ul>')
        parts += [f'<li class="warning">{e(line)}</li>' for line in _conflict_lines(measured, _relative)]
        parts.append('</ul>')
    if plots and measured.rows:
        figures = measured_plots(measured)
        if figures:
            parts.append('<h2>Plots</h2>')
            parts += [_img(title, png) for title, png in figures]
    parts.append('</section>')
    if paper:
        parts += ['<section class="paper"><h2>Paper reference results (not measured here)</h2>',
                  f'<p>{e(PAPER_INTRO)}</p>']
        for table in paper:
            parts.append(f'<h3>{e(table.title)}</h3>')
            if table.note:
                parts.append(f'<p>{e(table.note)}</p>')
            parts.append(_html_table(table, False))
        if plots:
            parts += [_img(title, png) for title, png in paper_plots(paper)]
        parts.append('</section>')
    parts.append('</body></html>')
    return '\n'.join(parts) + '\n'


def render(fmt: str, measured: Table, paper: Sequence[Table], sources: Sequence[str] = ()) -> str:
    if fmt == 'md':
        return render_markdown(measured, paper, sources)
    if fmt == 'csv':
        return render_csv(measured, paper)
    if fmt == 'html':
        return render_html(measured, paper, sources)
    raise ValueError(f'unknown leaderboard format {fmt!r}; expected one of {FORMATS}')


def format_of(path: str) -> str:
    """The format a file name asks for: leaderboard.md → 'md'; errors name the file."""
    ext = osp.splitext(path)[1].lstrip('.').lower()
    ext = {'markdown': 'md', 'htm': 'html'}.get(ext, ext)
    if ext not in FORMATS:
        raise ValueError(f"cannot tell the leaderboard format of '{path}' from its extension; use .md, .csv or "
                         '.html, or pass --format')
    return ext


def write_leaderboard(runs: Sequence[str], outputs: Dict[str, str], paper: bool = True) -> Table:
    """Build the table from the result.json files under ``runs`` and write it as ``{format: path}``
    (atomically: a reader never sees half a page). Returns the measured table (its conflicts included)."""
    from .paper import load_paper_tables
    from .table import build_table
    measured = build_table(runs)
    tables = load_paper_tables() if paper else []
    for fmt, path in outputs.items():
        atomic_write_text(render(fmt, measured, tables, runs), path)
    return measured

