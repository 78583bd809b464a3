"""Validation metrics: top-k accuracy (in percent), ImageNet-ReaL top-1 and MAE's reconstruction loss.

All leave out the stand-ins of images that ``LoadImage(skip_corrupt=True)`` could not read, and report how many
they left out as ``skipped_images`` (only when there were some), which result.json then records. The top-1
metrics also publish each image's correctness (:mod:`vitbench.results.per_image`): the leaderboard's interval over
images; and its predicted classes (top-1 and top-5) and label: the disagreement between runs (thesis Table 3.4).
"""
from typing import List, Optional, Sequence

import numpy as np
import torch
from mmengine.evaluator import BaseMetric

from vitbench.registry import METRICS
from vitbench.results.per_image import image_id, publish

from .imagenet_variants import REAL_LABELS
from .transforms import SKIPPED_LABEL


def _stand_ins(data_batch, size: int) -> List[bool]:
    """Which samples of the batch stand in for unreadable images (labelled SKIPPED_LABEL by LoadImage)."""
    samples = data_batch.get('data_samples') if isinstance(data_batch, dict) else None
    labels = samples.get('gt_label') if isinstance(samples, dict) else None
    return [False] * size if labels is None else [int(label) == SKIPPED_LABEL for label in labels]


def _scored(results: list) -> list:
    """The results of the images that were read (None: a stand-in)."""
    scored = [r for r in results if r is not None]
    if not scored:
        raise ValueError(f'none of the {len(results)} evaluation images could be read (all skipped by '
                         'LoadImage(skip_corrupt=True)); see the log for the files')
    return scored


def _image_ids(data_batch, size: int) -> List[str]:
    """Each sample's image identifier (its file name under its class folder); its position when the batch has no
    paths (a loader of another kind)."""
    samples = data_batch.get('data_samples') if isinstance(data_batch, dict) else None
    paths = samples.get('img_path') if isinstance(samples, dict) else None
    return [image_id(p) for p in paths] if paths is not None else [''] * size


def _publish_top1(metric: str, results: list, predicted: Optional[list] = None,
                  labels: Optional[list] = None) -> None:
    """``results``: (top-1 right, image id) per read image; unnamed images are numbered in evaluation order.
    ``predicted``: each image's top-k classes, best first (``pred``: the top-1, ``topk``: all k), ``labels``: its
    label; what a disagreement between two runs is counted on (vitbench/results/disagreement.py)."""
    fields = dict(correct=[bool(right) for right, _ in results])
    if predicted is not None:
        fields['pred'] = np.array([top[0] for top in predicted], dtype=np.int32)
        if len({len(top) for top in predicted}) == 1 and len(predicted[0]) > 1:
            fields['topk'] = np.array(predicted, dtype=np.int32)
    if labels is not None:
        fields['label'] = np.array(labels, dtype=np.int32)
    publish(metric, 'accuracy', [name or str(i) for i, (_, name) in enumerate(results)], **fields)


def _with_skipped(metrics: dict, results: list) -> dict:
    skipped = sum(r is None for r in results)
    return dict(metrics, skipped_images=skipped) if skipped else metrics


class PerImageMetric(BaseMetric):
    """A metric with one result per image: ``(score(sample), image id)`` of each image read, None for a stand-in."""

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        names = _image_ids(data_batch, len(data_samples))
        for sample, stand_in, name in zip(data_samples, _stand_ins(data_batch, len(data_samples)), names):
            self.results.append(None if stand_in else (self.score(sample), name))

    def score(self, sample: dict):
        raise NotImplementedError


@METRICS.register_module()
class Accuracy(PerImageMetric):
    """Top-k accuracy in percent: reported as ``accuracy/top1``, ``accuracy/top5``. Reads the model's
    ``predict`` outputs, ``dict(pred_score=(num_classes,) tensor, gt_label=int tensor)`` per image.
    ``suffix`` names another test set's numbers apart in result.json (``'_v2'``: ``top1_v2``)."""
    default_prefix = 'accuracy'

    def __init__(self, topk: Sequence[int] = (1, 5), suffix: str = '', collect_device: str = 'cpu', prefix=None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.topk = tuple(topk)
        self.suffix = suffix

    def score(self, sample: dict) -> tuple:
        """(right within each top-k, the top max(k) classes best first, the label)."""
        score, label = sample['pred_score'], int(sample['gt_label'])
        k = min(max(self.topk), score.numel())
        top = score.topk(k).indices.tolist()
        return [label in top[:min(t, k)] for t in self.topk], top, label

    def compute_metrics(self, results: list) -> dict:
        scored = _scored(results)
        hits = torch.tensor([h for (h, _, _), _ in scored], dtype=torch.float64)
        if 1 in self.topk:
            _publish_top1(f'top1{self.suffix}', [(h[self.topk.index(1)], name) for (h, _, _), name in scored],
                          predicted=[top for (_, top, _), _ in scored], labels=[y for (_, _, y), _ in scored])
        return _with_skipped({f'top{k}{self.suffix}': float(hits[:, i].mean() * 100)
                              for i, k in enumerate(self.topk)}, results)


@METRICS.register_module()
class ReaLAccuracy(BaseMetric):
    """ImageNet-ReaL top-1 in percent, reported as ``accuracy/top1_real``: an image counts as right when the
    top-1 prediction is one of its valid labels, the multi-hot ``data_samples['real_labels']`` of the batch
    (pretrain.imagenet_variants.ImageNetReaL)."""
    default_prefix = 'accuracy'

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        valid = data_batch['data_samples'][REAL_LABELS]
        names = _image_ids(data_batch, len(data_samples))
        for sample, labels, stand_in, name in zip(data_samples, valid, _stand_ins(data_batch, len(data_samples)),
                                                  names):
            top1 = int(sample['pred_score'].argmax())
            self.results.append(None if stand_in else (bool(top1 < len(labels) and labels[top1]), name, top1))

    def compute_metrics(self, results: list) -> dict:
        scored = _scored(results)
        _publish_top1('top1_real', [(right, name) for right, name, _ in scored],
                      predicted=[[top1] for _, _, top1 in scored])
        hits = [right for right, _, _ in scored]
        return _with_skipped(dict(top1_real=100.0 * sum(hits) / len(hits)), results)


@METRICS.register_module()
class ReconstructionLoss(BaseMetric):
    """Mean per-image reconstruction loss of a masked autoencoder on the validation set, reported as
    ``mae/reconstruction_mse`` (a name without 'loss': mmengine's log processor would print a moving
    average of the validations for it)."""
    default_prefix = 'mae'

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        self.results += [None if stand_in else float(s['loss'])
                         for s, stand_in in zip(data_samples, _stand_ins(data_batch, len(data_samples)))]

    def compute_metrics(self, results: list) -> dict:
        losses = _scored(results)
        return _with_skipped(dict(reconstruction_mse=sum(losses) / len(losses)), results)
