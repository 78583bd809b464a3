"""The seed study's plots for the leaderboard's HTML page (thesis §6.3.4, Figures 6.7-6.10): for a cell measured
with many seeds (``tools/pipeline.py ... --seeds 1-100``), the histogram of its values with the Gaussian of their mean
and standard deviation, seed 0 marked; for a row measured on two test sets of one dataset (ImageNet val and V2),
each seed as a point (val, V2), which shows how little the best seed on one set is the best on the other; and from
the validations each run logged along its training (``vis_data/scalars.json``), the mean, std, min and max over the
seeds by epoch (Figure 6.9) and the final top-1 against the top-1 at earlier epochs (Figure 6.10: no early stopping
rule picks the best seeds).

Kept apart from :mod:`vitbench.results.plots` (the per-column plots); drawn the same way (Agg canvas, PNG bytes,
every text literal)."""
import glob
import json
import math
import os.path as osp
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


Curves = Dict[int, Dict[int, float]]  # seed -> {epoch: top-1}


def validation_curves(result_paths: Sequence[str], metric: str = 'top1') -> Curves:
    """{seed: {epoch: value}} of ``metric`` (a scalar named ``metric`` or ``.../metric``: 'accuracy/top1') from the
    newest ``vis_data/scalars.json`` beside each seeded run's result.json (runs without a seed or a log left out)."""
    curves: Curves = {}
    for path in result_paths:
        try:
            with open(path, encoding='utf-8') as f:
                seed = json.load(f).get('seed')
        except (OSError, ValueError):
            continue
        logs = sorted(glob.glob(osp.join(osp.dirname(path), '*', 'vis_data', 'scalars.json')))
        if seed is None or not logs:
            continue
        curve = {}
        with open(logs[-1], encoding='utf-8') as f:
            for line in f:
                try:
                    scalars = json.loads(line)
                except ValueError:
                    continue
                value = next((v for k, v in scalars.items() if k == metric or k.endswith('/' + metric)), None)
                if isinstance(value, (int, float)) and 'step' in scalars:
                    curve[int(scalars['step'])] = float(value)
        if curve:
            curves[int(seed)] = curve
    return curves


def spread_figure(curves: Curves, title: str) -> Figure:
    """Mean ± std band, min and max over the seeds at each epoch every seed validated (thesis Figure 6.9)."""
    epochs = sorted(set.intersection(*(set(c) for c in curves.values())))
    values = np.array([[curves[s][e] for e in epochs] for s in sorted(curves)])
    mean, std = values.mean(0), values.std(0, ddof=1)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot()
    ax.fill_between(epochs, mean - std, mean + std, color='#8fb3d9', alpha=0.6, label='mean ± std')
    ax.plot(epochs, mean, color='#2c7fb8', label='mean')
    ax.plot(epochs, values.min(0), color='#c0392b', linestyle=':', label='min')
    ax.plot(epochs, values.max(0), color='#27ae60', linestyle=':', label='max')
    ax.set_xlabel('epoch')
    ax.set_ylabel('top-1 (validation)')
    ax.set_title(f'{title}\n{len(curves)} seeds along the training')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def early_vs_final_figure(curves: Curves, title: str, fractions=(0.5, 250 / 300, 290 / 300)) -> Figure:
    """The last validation of each seed against its validation at earlier epochs, the thesis' 150, 250 and 290 of
    300 as fractions of the run (the nearest epoch validated); Pearson's r of each (thesis Figure 6.10)."""
    epochs = sorted(set.intersection(*(set(c) for c in curves.values())))
    last = epochs[-1]
    early = sorted({min(epochs[:-1], key=lambda e: abs(e - f * last)) for f in fractions}) if len(epochs) > 1 else []
    fig = Figure(figsize=(5.2 * max(len(early), 1), 4.2))
    seeds = sorted(curves)
    final = np.array([curves[s][last] for s in seeds])
    for i, epoch in enumerate(early):
        ax = fig.add_subplot(1, len(early), i + 1)
        at = np.array([curves[s][epoch] for s in seeds])
        r = float(np.corrcoef(at, final)[0, 1]) if at.std() > 0 and final.std() > 0 else float('nan')
        ax.scatter(at, final, s=14, color='#2c7fb8')
        ax.set_xlabel(f'top-1 at epoch {epoch}')
        ax.set_ylabel(f'top-1 at epoch {last}')
        ax.set_title(f'Pearson r = {r:.2f}')
        ax.grid(alpha=0.3)
    fig.suptitle(f'{title}: {len(seeds)} seeds, early vs final')
    return fig


@_literal_text
def seed_plots(table: Table, min_seeds: int = MIN_SEEDS) -> List[Plot]:
    """Every cell of ``table`` with at least ``min_seeds`` seeds as a histogram, then, per row, each other test set
    of a dataset against its main one (eval 'ss': ImageNet val) over the seeds measured on both; then, for a row
    whose runs of at least ``min_seeds`` seeds logged their validations, the spread along the epochs and the
    early-vs-final scatter."""
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
        curves = validation_curves(row.runs) if seeded else {}
        if len(curves) >= min_seeds and set.intersection(*(set(c) for c in curves.values())):
            title = labels[id(row)]
            plots.append((f'{title}: top-1 over seeds along the epochs', _png(spread_figure(curves, title))))
            plots.append((f'{title}: final top-1 vs earlier epochs', _png(early_vs_final_figure(curves, title))))
    return plots
