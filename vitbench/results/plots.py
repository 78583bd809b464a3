"""Plots of the leaderboard for its HTML page: matplotlib figures (Agg canvas, no pyplot state) as PNG bytes."""
import io
from typing import List, Sequence, Tuple

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .table import Column, Row, Table

Plot = Tuple[str, bytes]  # title, PNG


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


def scatter_vs_gflops(table: Table, columns: Sequence[Column], title: str, ylabel: str,
                      labels: Sequence[str] = None, xlabel: str = 'GFLOPs') -> Plot:
    """One marker per column; each row is named once, next to its first point."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    names = dict(zip(map(id, table.rows), labels or row_labels(table.rows)))
    named = set()
    for column, marker in zip(columns, 'osD^v<>p'):
        points = [(r.gflops, r.values[column], r) for r in table.rows if r.gflops is not None and column in r.values]
        ax.scatter([p[0] for p in points], [p[1] for p in points], marker=marker, s=40, label=column.label)
        for x, y, row in points:
            if id(row) not in named:
                named.add(id(row))
                ax.annotate(names[id(row)], (x, y), textcoords='offset points', xytext=(5, -9), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.margins(x=0.15, y=0.1)
    ax.legend(fontsize=8)
    return title, _png(fig)


def grouped_bars(table: Table, columns: Sequence[Column], title: str, ylabel: str) -> Plot:
    """One group of bars per column (dataset), one bar per row; missing values leave a gap."""
    rows = [r for r in table.rows if any(c in r.values for c in columns)]
    fig = Figure(figsize=(max(6.4, 1.1 * len(columns) * max(len(rows), 1) * 0.45 + 2), 4.2))
    ax = fig.add_subplot()
    width = 0.8 / max(len(rows), 1)
    colour = {id(r): f'C{i % 10}' for i, r in enumerate(table.rows)}  # a row keeps its colour in every plot
    for i, (row, label) in enumerate(zip(rows, row_labels(rows))):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j, c in enumerate(columns) if c in row.values]
        ys = [row.values[c] for c in columns if c in row.values]
        bars = ax.bar(xs, ys, width=width, label=label, color=colour[id(row)])
        ax.bar_label(bars, fmt='%.1f', fontsize=6, padding=1)
    ax.set_xticks(range(len(columns)), [c.label for c in columns], rotation=20, ha='right', fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis='y', alpha=0.3)
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1.0))
    return title, _png(fig)


def measured_plots(table: Table) -> List[Plot]:
    """mIoU vs GFLOPs, then bars per kind of measurement (transfer, detection, ImageNet) that has values."""
    plots = []
    seg = [c for c in table.columns if c.kind == 'seg']
    if any(r.gflops is not None and c in r.values for r in table.rows for c in seg):
        plots.append(scatter_vs_gflops(table, seg, 'Segmentation mIoU vs backbone GFLOPs', 'mIoU (%)'))
    for kinds, title, ylabel in ((('transfer',), 'Transfer top-1 per dataset', 'top-1 (%)'),
                                 (('box', 'mask'), 'Detection and instance segmentation AP', 'AP'),
                                 (('cls',), 'ImageNet top-1', 'top-1 (%)')):
        columns = [c for c in table.columns if c.kind in kinds]
        if columns:
            plots.append(grouped_bars(table, columns, title, ylabel))
    return plots


def paper_plots(tables: Sequence[Table]) -> List[Plot]:
    """mIoU vs GFLOPs of the paper tables that give both (e.g. DeiT III ADE20k, GFLOPs of the whole model)."""
    plots = []
    for table in tables:
        seg = [c for c in table.columns if c.kind == 'seg']
        if any(r.gflops is not None and c in r.values for r in table.rows for c in seg):
            labels = [r.backbone.split(' (')[0] for r in table.rows]  # the paper's model names
            plots.append(scatter_vs_gflops(table, seg, 'Paper: ' + table.title.split(':')[0], 'mIoU (%)', labels,
                                           xlabel='GFLOPs (as the table counts them)'))
    return plots
