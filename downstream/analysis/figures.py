"""The analyses' figures as PNG files (matplotlib's Agg canvas, no pyplot state), each written atomically, after
the MAE-lite paper's: CKA heatmaps and their diagonal (Fig. 1), Δ log amplitude per layer (Fig. 3), attention
distance and entropy per head against depth (Fig. 5), top-1 against the number of kept blocks (Figs. 2, 4)."""
import io
import math
from typing import List

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from vitbench.fileio import atomic_write_bytes


def save(fig: Figure, path: str) -> str:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format='png', dpi=110, bbox_inches='tight')
    atomic_write_bytes(buf.getvalue(), path)
    return path


def _grid(n: int, width: float, height: float):
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout='constrained')
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(n)]


def cka_heatmaps(result: dict, path: str) -> str:
    pairs = result['pairs']
    fig, axes = _grid(len(pairs), 3.4, 3.1)
    image = None
    for ax, pair in zip(axes, pairs):
        image = ax.imshow(pair['matrix'], origin='lower', cmap='magma', vmin=0.0, vmax=1.0)
        ax.set_xlabel(f"layers of {pair['b']}")
        ax.set_ylabel(f"layers of {pair['a']}")
        ax.set_title(f"{pair['a']} vs {pair['b']}", fontsize=10)
    fig.colorbar(image, ax=axes, shrink=0.6, label='CKA')
    fig.suptitle(f"Linear CKA (unbiased, {result['images']} images)")
    return save(fig, path)


def cka_diagonals(result: dict, path: str) -> str:
    """CKA of layer i of one model with layer i of the other, for every pair of two different models."""
    fig = Figure(figsize=(5.2, 3.6))
    ax = fig.add_subplot()
    for pair in result['pairs']:
        m = pair['matrix']
        if pair['a'] == pair['b'] or len(m) != len(m[0]):
            continue
        ax.plot(range(len(m)), [m[i][i] for i in range(len(m))], marker='o', label=f"{pair['a']} vs {pair['b']}")
    ax.set_xlabel('layer (0: patch embedding)')
    ax.set_ylabel('CKA at the same layer')
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    return save(fig, path)


def attention_scatter(result: dict, path: str) -> str:
    models = result['models']
    fig = Figure(figsize=(3.4 * len(models), 6.0), layout='constrained')
    top = {key: 1.05 * max(max(max(h) for h in s[key]) for s in models.values()) for key in ('distance', 'entropy')}
    for col, (label, stats) in enumerate(models.items()):
        for row, (key, ylabel) in enumerate((('distance', 'attention distance (pixels)'),
                                             ('entropy', 'attention entropy (nats)'))):
            ax = fig.add_subplot(2, len(models), row * len(models) + col + 1)
            values: List[List[float]] = stats[key]
            for depth, heads in zip(stats['layers'], values):
                ax.scatter([depth] * len(heads), heads, s=14, alpha=0.6)
            ax.plot(stats['layers'], [sum(h) / len(h) for h in values], color='black', marker='*', markersize=9)
            ax.set_xlabel('depth')
            ax.set_ylabel(ylabel)
            ax.set_ylim(0, top[key])  # one scale per row: the models compare at a glance
            if row == 0:
                ax.set_title(label, fontsize=10)
    fig.suptitle('Attention distance and entropy per head')
    return save(fig, path)


def fourier_delta(result: dict, path: str) -> str:
    fig = Figure(figsize=(5.2, 3.6))
    ax = fig.add_subplot()
    top = None
    for label, stats in result['models'].items():
        ax.plot(stats['layers'], stats['delta_log_amplitude'], marker='o', label=label)
        top = stats['highest_frequency_pi']
    ax.set_xlabel('layer (0: patch embedding)')
    ax.set_ylabel(f'Δ log amplitude ({top:.2g}π vs 0)')
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, path)


def keep_blocks_plot(result: dict, path: str) -> str:
    datasets = result['datasets']
    fig, axes = _grid(len(datasets), 4.2, 3.4)
    for ax, (dataset, data) in zip(axes, datasets.items()):
        for recipe, by_k in data['series'].items():
            ks = sorted(int(k) for k in by_k)
            ax.plot(ks, [by_k[k] if k in by_k else by_k[str(k)] for k in ks], marker='o', label=recipe)
        if data['scratch'] is not None:
            ax.axhline(data['scratch'], color='grey', linestyle='--', label='scratch')
        ax.set_xlim(-0.3, data['depth'] + 0.3)
        ax.set_xlabel('pre-trained blocks kept (first k)')
        ax.set_ylabel(result['metric'])
        ax.set_title(dataset, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return save(fig, path)
