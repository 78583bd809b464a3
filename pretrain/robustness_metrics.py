"""Robustness and calibration metrics of an ImageNet-1k classifier, in percent:

- ``top1_a`` / ``top1_r``: ImageNet-A / -R top-1 with the argmax taken over the dataset's 200 classes only, as
  their papers evaluate a 1k model (:class:`ClassSubsetAccuracy`). ImageNet-Sketch needs no metric of its own:
  ``Accuracy(suffix='_sketch')`` of pretrain.metrics.
- ``mCE``: ImageNet-C's mean corruption error, the top-1 errors normalised by AlexNet's (:class:`CorruptionError`).
- ``ece``: expected calibration error, 15 equal-width confidence bins (:class:`CalibrationError`); on ImageNet val
  next to top-1 and top-5 (:class:`AccuracyWithCalibration`).

They follow pretrain.metrics' conventions: stand-ins of unreadable images are left out and counted as
``skipped_images``, and the top-1 metrics publish each image's correctness (vitbench.results.per_image).
"""
from typing import Dict, List, Optional, Sequence

import torch
from mmengine.evaluator import BaseMetric
from mmengine.logging import print_log

from vitbench.registry import METRICS
from vitbench.results.per_image import publish

from .metrics import Accuracy, PerImageMetric, _image_ids, _publish_top1, _scored, _stand_ins, _with_skipped
from .robustness import ALL_CORRUPTIONS, CORRUPTION, CORRUPTIONS, SEVERITIES, SEVERITY, class_subset_indices

# AlexNet's top-1 error on ImageNet-C, per benchmark corruption, averaged over severities 1-5 (a fraction): the
# normaliser of the corruption error (Hendrycks & Dietterich, ICLR 2019, Section 3: CE_c = sum_s E_s,c(f) /
# sum_s E_s,c(AlexNet)). Not in ../shared: these are the values measured with hendrycks/robustness'
# ImageNet-C/test.py ("Raw AlexNet errors taken from https://github.com/hendrycks/robustness"), as AugMix's
# imagenet.py (google-research/augmix, ALEXNET_ERR) lists them in this corruption order.
ALEXNET_ERROR = dict(zip(CORRUPTIONS, (
    0.886428, 0.894468, 0.922640,  # gaussian_noise, shot_noise, impulse_noise
    0.819880, 0.826268, 0.785948, 0.798360,  # defocus_blur, glass_blur, motion_blur, zoom_blur
    0.866816, 0.826572, 0.819324, 0.564592,  # snow, frost, fog, brightness
    0.853204, 0.646056, 0.717840, 0.606500,  # contrast, elastic_transform, pixelate, jpeg_compression
)))
SUBSET_SUFFIXES = {'imagenet_a': '_a', 'imagenet_r': '_r'}


@METRICS.register_module()
class ClassSubsetAccuracy(PerImageMetric):
    """Top-1 in percent over the classes of ``classes`` ('imagenet_a' or 'imagenet_r'): the prediction is the
    argmax of the model's scores at those classes' ImageNet-1k indices only. Reported as ``accuracy/top1_a`` /
    ``accuracy/top1_r`` (``suffix`` overrides the name's ending). A model with fewer than 1000 outputs (the demo's
    25, the first 25 of the 1k wnids) is scored over the listed classes among its outputs."""
    default_prefix = 'accuracy'

    def __init__(self, classes: str, suffix: Optional[str] = None, collect_device: str = 'cpu', prefix=None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        if classes not in SUBSET_SUFFIXES:
            raise ValueError(f'ClassSubsetAccuracy classes={classes!r}: expected one of {sorted(SUBSET_SUFFIXES)}')
        self.classes = classes
        self.suffix = SUBSET_SUFFIXES[classes] if suffix is None else suffix
        self._kept: Dict[int, torch.Tensor] = {}  # number of outputs -> the subset's indices among them

    def kept(self, num_outputs: int) -> torch.Tensor:
        """The indices of the subset's classes among ``num_outputs`` scores."""
        if num_outputs not in self._kept:
            kept = torch.tensor([i for i in class_subset_indices(self.classes) if i < num_outputs], dtype=torch.long)
            if not len(kept):
                raise ValueError(f'ClassSubsetAccuracy({self.classes!r}): the model has {num_outputs} outputs, none '
                                 f'of them a class of {self.classes} (expected ImageNet-1k scores, 1000 outputs)')
            self._kept[num_outputs] = kept
        return self._kept[num_outputs]

    def score(self, sample: dict) -> bool:
        score = sample['pred_score'].flatten()
        kept = self.kept(score.numel())
        return int(kept[score[kept.to(score.device)].argmax()]) == int(sample['gt_label'])

    def compute_metrics(self, results: list) -> dict:
        scored = _scored(results)
        metric = f'top1{self.suffix}'
        _publish_top1(metric, scored)
        return _with_skipped({metric: 100.0 * sum(right for right, _ in scored) / len(scored)}, results)


def corruption_errors(errors: Dict[str, Dict[int, float]]) -> Dict[str, float]:
    """From each corruption's top-1 error (%) per severity: ``error_<c>`` (the mean over its severities), ``CE_<c>``
    (sum of its errors over severities 1-5 / AlexNet's, in %; only with all five) and the mean of the CEs: ``mCE``
    when all 15 benchmark corruptions have one, else ``mCE_partial`` (a mean over fewer is not ImageNet-C's mCE)."""
    metrics, ces = {}, {}
    for corruption, by_severity in errors.items():
        metrics[f'error_{corruption}'] = sum(by_severity.values()) / len(by_severity)
        if corruption in ALEXNET_ERROR and set(by_severity) == set(SEVERITIES):
            ces[corruption] = sum(by_severity.values()) / (100.0 * ALEXNET_ERROR[corruption] * len(SEVERITIES)) * 100
            metrics[f'CE_{corruption}'] = ces[corruption]
    if ces:
        complete = set(ces) == set(CORRUPTIONS)
        metrics['mCE' if complete else 'mCE_partial'] = sum(ces.values()) / len(ces)
    return metrics


@METRICS.register_module()
class CorruptionError(BaseMetric):
    """ImageNet-C (pretrain.robustness.ImageNetC): per corruption ``error_<c>`` and ``CE_<c>``, and ``mCE`` (all in
    percent, lower is better; see :func:`corruption_errors`), under ``corruption/``. Reads each image's corruption
    and severity from the batch (``data_samples['corruption']``, ``['severity']``)."""
    default_prefix = 'corruption'

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        tags = data_batch['data_samples']
        names = _image_ids(data_batch, len(data_samples))  # the clean image's name: its copies share it
        pairs = zip(tags[CORRUPTION], tags[SEVERITY], _stand_ins(data_batch, len(data_samples)), names)
        for sample, (corruption, severity, stand_in, name) in zip(data_samples, pairs):
            right = int(sample['pred_score'].argmax()) == int(sample['gt_label'])
            self.results.append(None if stand_in else (int(corruption), int(severity), right, name))

    def compute_metrics(self, results: list) -> dict:
        counts: Dict[tuple, List[int]] = {}  # (corruption, severity) -> [right, images]
        for corruption, severity, right, _ in _scored(results):
            count = counts.setdefault((ALL_CORRUPTIONS[corruption], severity), [0, 0])
            count[0] += right
            count[1] += 1
        errors: Dict[str, Dict[int, float]] = {}
        for (corruption, severity), (right, images) in sorted(counts.items()):
            errors.setdefault(corruption, {})[severity] = 100.0 * (1 - right / images)
        metrics = corruption_errors(errors)
        if 'mCE_partial' in metrics:
            missing = [c for c in CORRUPTIONS if f'CE_{c}' not in metrics]
            print_log(f'ImageNet-C: no corruption error for {missing} (their folders, or some of their severities '
                      '1-5, were not evaluated); reporting mCE_partial, the mean over the other corruptions',
                      logger='current', level=30)
        for name in ('mCE', 'mCE_partial'):
            if name in metrics:
                publish_corruption_evidence(name, _scored(results), metrics)
        return _with_skipped(metrics, results)


def publish_corruption_evidence(name: str, scored: list, metrics: dict) -> None:
    """The mCE as a weighted sum of each (corruption, severity)'s error (vitbench.results.per_image's
    ``grouped_error``): weight 1 / (corruptions in the mean × severities × AlexNet's mean error) for the corruptions
    whose CE is in ``metrics``, 0 for the others. An image's copies are resampled together."""
    conditions = sorted({(corruption, severity) for corruption, severity, _, _ in scored})
    group = {condition: g for g, condition in enumerate(conditions)}
    counted = [c for c in CORRUPTIONS if f'CE_{c}' in metrics]
    weight = [1.0 / (len(counted) * len(SEVERITIES) * ALEXNET_ERROR[ALL_CORRUPTIONS[c]])
              if ALL_CORRUPTIONS[c] in counted else 0.0 for c, _ in conditions]
    images = sorted({image for _, _, _, image in scored})
    image_index = {image: i for i, image in enumerate(images)}
    publish(name, 'grouped_error', images, entry_image=[image_index[image] for _, _, _, image in scored],
            correct=[right for _, _, right, _ in scored], group=[group[c, s] for c, s, _, _ in scored],
            group_weight=weight)


def expected_calibration_error(confidences: torch.Tensor, correct: torch.Tensor, bins: int = 15) -> float:
    """ECE in percent (Guo et al., ICML 2017, Eq. 3): the images are put into ``bins`` equal-width bins of top-1
    confidence, (k/bins, (k+1)/bins]; the ECE is the mean over images of |accuracy - mean confidence| of their bin."""
    confidences = confidences.double()
    edges = torch.linspace(0, 1, bins + 1, dtype=torch.float64)
    bin_of = torch.bucketize(confidences, edges[1:-1], right=False)  # edges[i-1] < c <= edges[i] -> bin i
    counts = torch.bincount(bin_of, minlength=bins).double()
    gap = (torch.bincount(bin_of, weights=correct.double(), minlength=bins)
           - torch.bincount(bin_of, weights=confidences, minlength=bins)).abs()  # per bin: images x |acc - conf|
    return float(100.0 * gap.sum() / counts.sum())


@METRICS.register_module()
class CalibrationError(PerImageMetric):
    """Expected calibration error of the top-1 prediction, in percent, over ``bins`` equal-width confidence bins
    (15, as Guo et al. 2017): ``accuracy/ece`` (+ ``suffix``). Reads the
    model's ``pred_score`` as class probabilities (ImageClassifier.predict's softmax)."""
    default_prefix = 'accuracy'  # beside top1 and top5: all of them in result.json without it

    def __init__(self, bins: int = 15, suffix: str = '', collect_device: str = 'cpu', prefix=None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        if bins < 1:
            raise ValueError(f'CalibrationError bins={bins}: expected a positive number of bins')
        self.bins, self.suffix = bins, suffix

    def score(self, sample: dict) -> tuple:
        confidence, top1 = sample['pred_score'].float().max(dim=-1)
        return float(confidence), int(top1) == int(sample['gt_label'])

    def compute_metrics(self, results: list) -> dict:
        scored = _scored(results)
        confidence, correct = [c for (c, _), _ in scored], [r for (_, r), _ in scored]
        publish(f'ece{self.suffix}', 'calibration', [name or str(i) for i, (_, name) in enumerate(scored)],
                confidence=confidence, correct=correct, bins=self.bins)
        ece = expected_calibration_error(torch.tensor(confidence), torch.tensor(correct), self.bins)
        return _with_skipped({f'ece{self.suffix}': ece}, results)


@METRICS.register_module()
class AccuracyWithCalibration(BaseMetric):
    """ImageNet val's metrics: pretrain.metrics.Accuracy's ``top<k>`` and :class:`CalibrationError`'s ``ece`` (15
    bins), in one metric so that the base configs' ``val_evaluator`` stays one dict, which configs and
    --cfg-options override as before: ``test_evaluator = dict(suffix='_v2')`` for another test set gives
    ``top1_v2`` and ``ece_v2``, ``dict(type='Accuracy', suffix='_v2')`` plain Accuracy."""
    default_prefix = 'accuracy'

    def __init__(self, topk: Sequence[int] = (1, 5), suffix: str = '', bins: int = 15, collect_device: str = 'cpu',
                 prefix=None):
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.parts = (Accuracy(topk=topk, suffix=suffix, collect_device=collect_device),
                      CalibrationError(bins=bins, suffix=suffix, collect_device=collect_device))

    def process(self, data_batch, data_samples: Sequence[dict]) -> None:
        for part in self.parts:  # each appends one result per sample (None for a stand-in)
            part.process(data_batch, data_samples)
        self.results += list(zip(*(part.results for part in self.parts)))
        for part in self.parts:
            part.results.clear()

    def compute_metrics(self, results: list) -> dict:
        metrics = {}
        for i, part in enumerate(self.parts):
            metrics.update(part.compute_metrics([result[i] for result in results]))
        return metrics
