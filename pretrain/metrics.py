"""Validation metrics: top-k accuracy (in percent) and MAE's reconstruction loss."""
from typing import Sequence

import torch
from mmengine.evaluator import BaseMetric

from vitbench.registry import METRICS


@METRICS.register_module()
class Accuracy(BaseMetric):
    """Top-k accuracy in percent: reported as ``accuracy/top1``, ``accuracy/top5``. Reads the model's
    ``predict`` outputs, ``dict(pred_score=(num_classes,) tensor, gt_label=int tensor)`` per image."""
    default_prefix = 'accuracy'

    def __init__(self, topk: Sequence[int] = (1, 5), collect_device: str = 'cpu', prefix=None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.topk = tuple(topk)

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            score, label = sample['pred_score'], int(sample['gt_label'])
            k = min(max(self.topk), score.numel())
            top = score.topk(k).indices.tolist()
            self.results.append([label in top[:min(t, k)] for t in self.topk])

    def compute_metrics(self, results: list) -> dict:
        hits = torch.tensor(results, dtype=torch.float64)
        return {f'top{k}': float(hits[:, i].mean() * 100) for i, k in enumerate(self.topk)}


@METRICS.register_module()
class ReconstructionLoss(BaseMetric):
    """Mean per-image reconstruction loss of a masked autoencoder on the validation set, reported as
    ``mae/reconstruction_mse`` (a name without 'loss': mmengine's log processor would print a moving
    average of the validations for it)."""
    default_prefix = 'mae'

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        self.results += [float(s['loss']) for s in data_samples]

    def compute_metrics(self, results: list) -> dict:
        return dict(reconstruction_mse=sum(results) / len(results))
