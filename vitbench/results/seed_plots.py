"""The seed study's plots for the leaderboard's HTML page (thesis §6.3.4, Figures 6.7 and 6.8): for a cell measured
with many seeds (``tools/pipeline.py ... --seeds 1-100``), the histogram of its values with the Gaussian of their mean
and standard deviation, seed 0 marked; and for a row measured on two test sets of one dataset (ImageNet val and V2),
each seed as a point (val, V2), which shows how little the best seed on one set is the best on the other.

Kept apart from :mod:`vitbench.results.plots` (the per-column plots); drawn the same way (Agg canvas, PNG bytes,
every text literal)."""
import math
from typing import Dict, List, Sequence, Tuple

import numpy as np
from matplotlib.figure import Figure

from .plots import Plot, _literal_text, _png, row_labels
from .table import Column, Row, Table

MIN_SEEDS = 5  # fewer seeds are no distribution to draw: the table's mean ± std (n) says it


def seeded_samples(row: Row, column: Column) -> Dict[int, float]:
    """The cell's value per seed (runs without a seed left out)."""
    return {s: v for s, v in (row.samples.get(column) or {}).items() if s is not None}


def gaussian_fit(values: Sequence[float]) -> Tuple[float, float]:
    """(mean, sample standard deviation) of ``values``: the Gaussian the thesis fits to Figure 6.8's histogram."""
    x = np.asarray(values, dtype=float)
    return float(x.mean()), float(x.std(ddof=1)) if len(x) > 1 else 0.0


def seed_histogram(values: Dict[int, float], title: str, xlabel: str) -> Plot:
    """Counts of the seeds' values in bins, the fitted Gaussian scaled to the counts, seed 0 as a line."""
    return f'{title}: {xlabel} over seeds', _png(histogram_figure(values, title, xlabel))


def histogram_figure(values: Dict[int, float], title: str, xlabel: str) -> Figure:
    """:func:`seed_histogram`'s figure (its bars, the Gaussian as the line labelled 'Gaussian fit')."""
    v = np.array(list(values.values()), dtype=float)
    mean, std = gaussian_fit(v)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    bins = max(5, min(30, int(math.ceil(2 * len(v) ** (1 / 3)))))  # Rice's rule, kept readable
    counts, edges, _ = ax.hist(v, bins=bins, color='#8fb3d9', edgecolor='white', label=f'{len(v)} seeds')
    if std > 0:
        x = np.linspace(edges[0] - std, edges[-1] + std, 200)
        width = edges[1] - edges[0]
        ax.plot(x, len(v) * width * np.exp(-0.5 * ((x - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi)),
                color='#c0392b', label=f'Gaussian fit: {mean:.2f} ± {std:.2f}')
    if 0 in values:
        ax.axvline(values[0], color='black', linestyle='--', label=f'seed 0: {values[0]:.2f}')
    ax.set_xlabel(xlabel)
    ax.set_ylabel('seeds')
    ax.set_title(f'{title}\nmin {v.min():.2f} · max {v.max():.2f}')
    ax.legend(fontsize=8)
    return fig


def seed_pairs(x: Dict[int, float], y: Dict[int, float], title: str, xlabel: str, ylabel: str) -> Plot:
    """Each seed measured on both sets as a point; the best seed of each set ringed; Pearson's r in the title."""
    seeds = sorted(set(x) & set(y))
    a, b = np.array([x[s] for s in seeds]), np.array([y[s] for s in seeds])
    r = float(np.corrcoef(a, b)[0, 1]) if len(seeds) > 2 and a.std() > 0 and b.std() > 0 else float('nan')
    fig = Figure(figsize=(5.2, 4.6))
    ax = fig.add_subplot()
    ax.scatter(a, b, s=18, color='#2c7fb8')
    for best, marker_color in ((seeds[int(a.argmax())], '#c0392b'), (seeds[int(b.argmax())], '#27ae60')):
        ax.scatter([x[best]], [y[best]], s=90, facecolors='none', edgecolors=marker_color)
        ax.annotate(f'seed {best}', (x[best], y[best]), textcoords='offset points', xytext=(5, 4), fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(f'{title}\n{len(seeds)} seeds, Pearson r = {r:.2f}')
    ax.grid(alpha=0.3)
    return f'{title}: {ylabel} vs {xlabel} per seed', _png(fig)


@_literal_text
def seed_plots(table: Table, min_seeds: int = MIN_SEEDS) -> List[Plot]:
    """Every cell of ``table`` with at least ``min_seeds`` seeds as a histogram, then, per row, each other test set
    of a dataset against its main one (eval 'ss': ImageNet val) over the seeds measured on both."""
    plots = []
    labels = dict(zip(map(id, table.rows), row_labels(table.rows)))
    for row in table.rows:
        seeded = {c: seeded_samples(row, c) for c in table.columns}
        seeded = {c: s for c, s in seeded.items() if len(s) >= min_seeds}
        for column, samples in seeded.items():
            plots.append(seed_histogram(samples, labels[id(row)], column.label))
        for column, samples in seeded.items():
            main = Column(column.kind, column.dataset, 'ss', column.res, column.protocol, column.setting)
            if column.eval != 'ss' and main in seeded and len(set(seeded[main]) & set(samples)) >= min_seeds:
                plots.append(seed_pairs(seeded[main], samples, labels[id(row)], main.label, column.label))
    return plots
