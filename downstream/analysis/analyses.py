"""Run the representation analyses of MAE-lite §4 over models and images: one pass per batch and model feeds
layer-wise CKA (every pair of models, each with itself included, or every model against a reference), attention
distance / entropy, and the Fourier analysis of feature maps. Returns the numbers as plain JSON-able dicts."""
from typing import Dict, List, Optional, Sequence

import torch

from .attention_stats import AttentionStats, patch_attention, patch_distances
from .cka import MIN_BATCH, MinibatchCKA, gram_matrices
from .features import check_token_model, has_attention, walk_layers
from .fourier import FourierStats, token_maps
from .models import AnalysisModel

ANALYSES = ('cka', 'attention', 'fourier')


def cka_pairs(labels: Sequence[str], reference: Optional[str] = None) -> List[tuple]:
    """(a, b) label pairs to compare: all with a <= b in the given order, or (x, reference) for every x."""
    if reference is not None:
        if reference not in labels:
            raise ValueError(f'--reference {reference!r} is none of the models ({", ".join(labels)})')
        return [(x, reference) for x in labels]
    return [(a, b) for i, a in enumerate(labels) for b in labels[i:]]


def run_analyses(models: Sequence[AnalysisModel], images: torch.Tensor, analyses: Sequence[str] = ANALYSES,
                 batch_size: int = 64, reference: Optional[str] = None) -> Dict[str, dict]:
    unknown = [a for a in analyses if a not in ANALYSES]
    if unknown:
        raise ValueError(f'unknown analyses {unknown}; expected some of {ANALYSES}')
    labels = [m.label for m in models]
    if len(set(labels)) != len(labels):
        raise ValueError(f'--models: labels must differ, got {labels}')
    for m in models:
        check_token_model(m.model, m.label)
        if 'attention' in analyses and not has_attention(m.model):
            raise ValueError(f"--models {m.label}: {m.arch} has no attention maps; run the cka or fourier "
                             'analysis for it (tools/analyze.py cka|fourier), not attention or all')
    if 'cka' in analyses and batch_size < MIN_BATCH:
        raise ValueError(f'--batch-size {batch_size}: CKA needs at least {MIN_BATCH} images per batch')
    pairs = cka_pairs(labels, reference) if 'cka' in analyses else []
    cka = {pair: MinibatchCKA() for pair in pairs}
    attn = {m.label: AttentionStats() for m in models}
    fourier = {m.label: FourierStats() for m in models}
    depth = {}
    grids = {}
    used = 0
    for start in range(0, images.shape[0], batch_size):
        x = images[start:start + batch_size]
        if 'cka' in analyses and x.shape[0] < MIN_BATCH:
            break  # a last batch too small for the unbiased estimator is left out of every analysis
        used += x.shape[0]
        grams = {}
        for m in models:
            reps = []
            distances = None
            for layer in walk_layers(m.model, x, attention='attention' in analyses):
                depth[m.label] = layer.index
                grids[m.label] = list(layer.grid)
                if 'cka' in analyses:
                    reps.append(layer.normed)
                if 'fourier' in analyses:
                    fourier[m.label].update(layer.index, token_maps(layer.raw, layer.grid))
                if layer.attn_logits is not None:
                    if distances is None:
                        distances = patch_distances(layer.grid, m.patch_size)
                    prefix = layer.attn_logits.shape[-1] - layer.raw.shape[1]
                    attn[m.label].update(layer.index, patch_attention(layer.attn_logits, prefix), distances)
            if reps:
                grams[m.label] = gram_matrices(reps)
        for (a, b), acc in cka.items():
            acc.update(grams[a], grams[b])

    common = dict(images=used, batch_size=batch_size)
    out = {}
    if 'cka' in analyses:
        out['cka'] = dict(common, estimator='linear CKA, unbiased HSIC, minibatch (Nguyen et al. 2021)',
                          layers='0: patch embedding, i: block i (normalised, class token left out)',
                          pairs=[dict(a=a, b=b, matrix=acc.matrix().tolist()) for (a, b), acc in cka.items()])
    if 'attention' in analyses:
        out['attention'] = dict(common, distance_unit='pixels', entropy_unit='nats', models={
            m.label: dict(arch=m.arch, grid=grids[m.label], patch_size=m.patch_size,
                          layers=list(range(1, depth[m.label] + 1)), **attn[m.label].result())
            for m in models})
    if 'fourier' in analyses:
        out['fourier'] = dict(common, models={
            m.label: dict(arch=m.arch, grid=grids[m.label], layers=list(range(depth[m.label] + 1)),
                          **fourier[m.label].result())
            for m in models})
    return out
