"""``FrozenFeatureMetric``: the scores of frozen features, given the training set's features as the memory
(:class:`~downstream.frozen.loop.FrozenFeatureLoop` sets it): the weighted k-NN's top-1 (:mod:`.knn`), the
category-level retrieval mAP of the test images against the training collection (:mod:`.retrieval`), and the
linear probe's top-1 (:mod:`.linear_probe`), all in percent, each with its per-image evidence for the leaderboard's
bootstrap intervals (vitbench/results/per_image.py: ``accuracy`` for the top-1s, ``mean`` of the per-query APs).
"""
from typing import Optional

import numpy as np
import torch
from mmengine.evaluator import BaseMetric

from vitbench.registry import METRICS
from vitbench.results.per_image import publish

from .knn import knn_predict
from .linear_probe import train_linear_probe
from .retrieval import average_precisions


@METRICS.register_module()
class FrozenFeatureMetric(BaseMetric):
    """Args:
        k, temperature: the k-NN's (DINO's defaults: 20, 0.07).
        linear_probe: the probe's arguments (:func:`train_linear_probe`), or None to skip it.
        retrieval: score the category-level retrieval mAP.
    """
    default_prefix = 'frozen'

    def __init__(self, k: int = 20, temperature: float = 0.07, linear_probe: Optional[dict] = None,
                 retrieval: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.k, self.temperature = k, temperature
        self.linear_probe = linear_probe
        self.retrieval = retrieval
        self.memory = None

    def set_memory(self, features: np.ndarray, labels: np.ndarray, num_classes: int) -> None:
        self.memory = (torch.from_numpy(features), torch.from_numpy(labels).long(), num_classes)

    def process(self, data_batch, data_samples) -> None:
        self.results += [(np.asarray(s['feature']), int(s['label']), str(s['id'])) for s in data_samples]

    def compute_metrics(self, results) -> dict:
        if self.memory is None:
            raise RuntimeError('FrozenFeatureMetric has no training features to compare with: run it with '
                               "test_cfg=dict(type='FrozenFeatureLoop', memory_dataloader=...)")
        train, train_labels, num_classes = self.memory
        test = torch.from_numpy(np.stack([f for f, _, _ in results]))
        labels = torch.tensor([y for _, y, _ in results])
        ids = [i for _, _, i in results]
        metrics = {}
        correct = (knn_predict(train, train_labels, test, self.k, self.temperature, num_classes) == labels).numpy()
        metrics['knn_top1'] = 100.0 * float(correct.mean())
        publish('knn_top1', 'accuracy', ids, correct=correct)
        if self.retrieval:
            ap = 100.0 * average_precisions(train, train_labels, test, labels).numpy()
            metrics['retrieval_map'] = float(ap.mean())
            publish('retrieval_map', 'mean', ids, value=ap)
        if self.linear_probe is not None:
            probe = train_linear_probe(train, train_labels, num_classes, **self.linear_probe)
            with torch.no_grad():
                correct = (probe(test.float()).argmax(1) == labels).numpy()
            metrics['linear_top1'] = 100.0 * float(correct.mean())
            publish('linear_top1', 'accuracy', ids, correct=correct)
        return metrics
