"""Plots of the leaderboard for its HTML page: matplotlib figures (Agg canvas, no pyplot state) as PNG bytes.

Every bar and point carries its cell's 95 % interval as an error bar (over seeds, Student t; or a single run's
over its test images); a cell without one (one run, no per-image results) is drawn without, and the figure says
so. A plot whose x has a single value says nothing of the trend it draws (every demo backbone at one GFLOPs): it is
left out, and :func:`measured_figures` says why; a small multiple keeps only the panels with at least two points.

Every text is drawn as written: names come from result.json files, and a '$' in one would start matplotlib's
mathtext (a recipe named ``$\\undefined{x$`` stopped the whole page); the public functions draw with
``text.parse_math`` off."""
import functools
import io
import math
from typing import TYPE_CHECKING, List, Optional, Sequence, Tuple

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import schema
from .table import Column, Row, Table

if TYPE_CHECKING:  # only for the annotation: baseline.py imports nothing of the plots
    from .baseline import Deltas

Plot = Tuple[str, bytes]  # title, PNG


def _literal_text(draw):
    """``draw`` with matplotlib's mathtext off for every text it makes (labels, titles, annotations)."""
    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        with matplotlib.rc_context({'text.parse_math': False}):
            return draw(*args, **kwargs)
    return drawn


def row_labels(rows: Sequence[Row]) -> List[str]:
    """Short labels: the backbone is left out when every row has the same one."""
    same_backbone = len({r.backbone for r in rows}) == 1
    labels = []
    for r in rows:
        parts = ([] if same_backbone else [r.backbone]) + [r.recipe]
        if r.epochs:
            parts.append(f'{r.epochs}ep')
        labels.append(' · '.join(p for p in parts if p))
    return labels


def _png(fig: Figure) -> bytes:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format='png', dpi=100, bbox_inches='tight')
    return buf.getvalue()


def _interval(row: Row, column: Column, value: float) -> Tuple[float, float]:
    """The distances from ``value`` down and up to the cell's 95 % interval; (0, 0) when it has none."""
    summary = row.stats.get(column)
    if summary is None or summary.ci95_low is None:
        return 0.0, 0.0
    return max(value - summary.ci95_low, 0.0), max(summary.ci95_high - value, 0.0)


def _has_interval(row: Row, column: Column) -> bool:
    summary = row.stats.get(column)
    return summary is not None and summary.ci95_low is not None


_NO_INTERVAL = 'no error bar: a cell of one run without per-image results has no interval'


def _footnote(fig: Figure, text: str) -> None:
    fig.text(0.01, -0.02, text, fontsize=7, color='#555', ha='left', va='top')


def scatter_vs_gflops(table: Table, columns: Sequence[Column], title: str, ylabel: str,
                      labels: Sequence[str] = None, xlabel: str = 'GFLOPs') -> Optional[Plot]:
    """One marker per column, with its interval; each row is named once, next to its first point. None when every
    point has the same GFLOPs (no trend to see)."""
    fig = scatter_figure(table, columns, title, ylabel, labels, xlabel)
    return None if fig is None else (title, _png(fig))


def scatter_figure(table: Table, columns: Sequence[Column], title: str, ylabel: str,
                   labels: Sequence[str] = None, xlabel: str = 'GFLOPs') -> Optional[Figure]:
    """The figure of :func:`scatter_vs_gflops`."""
    points = [(r.gflops, r.values[c], r, c) for c in columns for r in table.rows
              if r.gflops is not None and c in r.values]
    if len({x for x, *_ in points}) < 2:
        return None
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    names = dict(zip(map(id, table.rows), labels or row_labels(table.rows)))
    named = set()
    for column, marker in zip(columns, 'osD^v<>p'):
        mine = [(x, y, row) for x, y, row, c in points if c == column]
        if not mine:
            continue
        err = [_interval(row, column, y) for _, y, row in mine]
        ax.errorbar([p[0] for p in mine], [p[1] for p in mine], yerr=[[e[0] for e in err], [e[1] for e in err]],
                    fmt=marker, ms=6, capsize=3, label=column.label)
        for x, y, row in mine:
            if id(row) not in named:
                named.add(id(row))
                ax.annotate(names[id(row)], (x, y), textcoords='offset points', xytext=(5, -9), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.margins(x=0.15, y=0.1)
    ax.legend(fontsize=8)
    if any(not _has_interval(row, c) for _, _, row, c in points) and any(row.stats for _, _, row, _ in points):
        _footnote(fig, _NO_INTERVAL)
    return fig


def grouped_bars(table: Table, columns: Sequence[Column], title: str, ylabel: str) -> Plot:
    """One group of bars per column (dataset), one bar per row with its interval; missing values leave a gap."""
    return title, _png(bars_figure(table, columns, title, ylabel))


def bars_figure(table: Table, columns: Sequence[Column], title: str, ylabel: str) -> Figure:
    """The figure of :func:`grouped_bars`."""
    rows = [r for r in table.rows if any(c in r.values for c in columns)]
    fig = Figure(figsize=(max(6.4, 1.1 * len(columns) * max(len(rows), 1) * 0.45 + 2), 4.2))
    ax = fig.add_subplot()
    width = 0.8 / max(len(rows), 1)
    colour = {id(r): f'C{i % 10}' for i, r in enumerate(table.rows)}  # a row keeps its colour in every plot
    for i, (row, label) in enumerate(zip(rows, row_labels(rows))):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j, c in enumerate(columns) if c in row.values]
        ys = [row.values[c] for c in columns if c in row.values]
        err = [_interval(row, c, row.values[c]) for c in columns if c in row.values]
        bars = ax.bar(xs, ys, width=width, label=label, color=colour[id(row)],
                      yerr=[[e[0] for e in err], [e[1] for e in err]], capsize=2,
                      error_kw=dict(elinewidth=0.8, ecolor='#333'))
        ax.bar_label(bars, fmt='%.1f', fontsize=6, label_type='center', color='white')
    ax.set_xticks(range(len(columns)), [c.label for c in columns], rotation=20, ha='right', fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis='y', alpha=0.3)
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    if any(c in r.values and not _has_interval(r, c) for r in rows for c in columns):
        _footnote(fig, _NO_INTERVAL)
    return fig


def _grid(n: int, title: str):
    """A figure with ``n`` small panels (at most 3 a line) and the axes to draw in."""
    cols = min(n, 3)
    lines = math.ceil(n / cols)
    fig = Figure(figsize=(4.2 * cols, 3.4 * lines))
    fig.suptitle(title)
    return fig, [fig.add_subplot(lines, cols, i + 1) for i in range(n)]


PARETO_TITLE = 'Metric vs device-hours (pre-training + task)'


def pareto_plot(table: Table) -> Tuple[Optional[Plot], List[str]]:
    """Each measured column against the device-hours behind it (pre-training + that task): the price of a
    number, with its interval. A panel per column that has at least two points at two device-hours; the others are
    named in the notes (and the plot left out when none is left)."""
    fig, notes = pareto_figure(table)
    return (None if fig is None else (PARETO_TITLE, _png(fig))), notes


def pareto_figure(table: Table) -> Tuple[Optional[Figure], List[str]]:
    """The figure of :func:`pareto_plot` and its notes."""
    title = PARETO_TITLE
    columns, left_out = [], []
    for c in table.columns:
        hours = [r.cell_hours[c] for r in table.rows if c in r.cell_hours and c in r.values]
        if not hours:
            continue
        (columns if len(hours) >= 2 and len(set(hours)) >= 2 else left_out).append(c)
    notes = []
    if left_out:
        notes.append(f'{title}: left out {len(left_out)} column(s) with fewer than two points at different '
                     'device-hours: ' + ', '.join(c.label for c in left_out) + '.')
    if not columns:
        return None, notes
    fig, axes = _grid(len(columns), title)
    labels = dict(zip(map(id, table.rows), row_labels(table.rows)))
    for ax, column in zip(axes, columns):
        for i, row in enumerate(table.rows):
            if column not in row.cell_hours or column not in row.values:
                continue
            y = row.values[column]
            low, high = _interval(row, column, y)
            ax.errorbar(row.cell_hours[column], y, yerr=[[low], [high]], fmt='o', color=f'C{i % 10}', capsize=3)
            ax.annotate(labels[id(row)], (row.cell_hours[column], y), textcoords='offset points',
                        xytext=(5, -9), fontsize=7)
        ax.set_title(column.label, fontsize=9)
        ax.set_xlabel('device-hours', fontsize=8)
        ax.grid(alpha=0.3)
        ax.margins(x=0.25, y=0.15)
    fig.tight_layout()
    return fig, notes


@_literal_text
def delta_plot(deltas: 'Deltas', table: Table) -> Plot:
    """Per column, the Δ of each row against the baseline with its 95 % interval; filled: significant."""
    columns = [c for c in table.columns if any((i, c) in deltas.values for i in range(len(deltas.pairs)))]
    title = f'Δ vs {deltas.baseline}, paired by seed (95 % CI)'
    fig, axes = _grid(len(columns), title)
    names = row_labels([row for row, _ in deltas.pairs])
    for ax, column in zip(axes, columns):
        shown = [(names[i], deltas.of(i, column)) for i in range(len(deltas.pairs)) if deltas.of(i, column)]
        for y, (name, d) in enumerate(shown):
            low, high = (d.ci95_low, d.ci95_high) if d.ci95_low is not None else (d.mean, d.mean)
            ax.errorbar(d.mean, y, xerr=[[d.mean - low], [high - d.mean]], fmt='o', capsize=3, color=f'C{y % 10}',
                        markerfacecolor=f'C{y % 10}' if d.excludes_zero else 'white')
        ax.axvline(0, color='#888', lw=1)
        ax.set_yticks(range(len(shown)), [name for name, _ in shown], fontsize=8)
        ax.set_title(f'Δ {column.label}', fontsize=9)
        ax.grid(axis='x', alpha=0.3)
        ax.margins(y=0.3)
    fig.tight_layout()
    return title, _png(fig)


def _plots_of_kinds(style: str = '') -> List[Tuple[schema.Plot, Tuple[str, ...]]]:
    """Each plot the tasks' records ask for (of ``style``; '' : any) with the column kinds it draws, in order."""
    kinds_of = {}
    for kind in schema.kinds().values():
        if kind.plot is not None and style in ('', kind.plot.style):
            kinds_of.setdefault(kind.plot, []).append(kind.name)
    return sorted(((plot, tuple(names)) for plot, names in kinds_of.items()), key=lambda item: item[0].order)


def _has_gflops(table: Table, columns: Sequence[Column]) -> bool:
    return any(r.gflops is not None and c in r.values for r in table.rows for c in columns)


@_literal_text
def measured_figures(table: Table) -> Tuple[List[Plot], List[str]]:
    """The plots the tasks' records ask for (vitbench/results/schema.py: mIoU vs GFLOPs, bars of transfer,
    detection and ImageNet top-1) that have values, then each metric against its device-hours when the runs
    recorded their cost; and a line for each plot (or panel) left out, saying why."""
    plots, notes = [], []
    for plot, kinds in _plots_of_kinds():
        columns = [c for c in table.columns if c.kind in kinds]
        if plot.style == 'scatter':
            if _has_gflops(table, columns):
                drawn = scatter_vs_gflops(table, columns, plot.title, plot.ylabel)
                if drawn is None:
                    gflops = next(r.gflops for r in table.rows if r.gflops is not None)
                    notes.append(f'{plot.title}: not drawn, every row has the same GFLOPs ({gflops:g}): a single x '
                                 'shows no trend (the values are in the table).')
                else:
                    plots.append(drawn)
            continue
        columns = [c for c in columns if any(c in r.values for r in table.rows)]
        if columns:  # (a column of diverged runs only has no value to draw)
            plots.append(grouped_bars(table, columns, plot.title, plot.ylabel))
    if any(r.cell_hours for r in table.rows):
        drawn, left_out = pareto_plot(table)
        plots += [drawn] if drawn else []
        notes += left_out
    return plots, notes


def measured_plots(table: Table) -> List[Plot]:
    """The plots of :func:`measured_figures`, without the notes."""
    return measured_figures(table)[0]


@_literal_text
def paper_plots(tables: Sequence[Table]) -> List[Plot]:
    """The records' scatter plots (mIoU vs GFLOPs) of the paper tables that give both (e.g. DeiT III ADE20k, GFLOPs
    of the whole model) at two GFLOPs or more. A paper's number has no interval: these points have no error bar."""
    plots = []
    for table in tables:
        for plot, kinds in _plots_of_kinds('scatter'):
            columns = [c for c in table.columns if c.kind in kinds]
            if _has_gflops(table, columns):
                labels = [r.backbone.split(' (')[0] for r in table.rows]  # the paper's model names
                drawn = scatter_vs_gflops(table, columns, 'Paper: ' + table.title.split(':')[0], plot.ylabel,
                                          labels, xlabel='GFLOPs (as the table counts them)')
                plots += [drawn] if drawn else []
    return plots
