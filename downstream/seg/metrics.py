"""mmseg's IoUMetric, also returning each class's IoU so that result.json records it.

mmseg computes the per-class IoU but only logs it as a table. Here it is returned as ``IoU.<class>``
(percent, like mIoU). Classes absent from both the ground truth and the predictions have no IoU: they are
left out, as mmseg's mIoU (a nanmean) leaves them out.

It also publishes each image's intersection and union per class (:mod:`vitbench.results.per_image`): the
leaderboard's interval over images.
"""
import math

import numpy as np
import torch
from mmseg.evaluation import IoUMetric

from vitbench.compat.mmseg import iou_areas, name_iou_results, unname_iou_results
from vitbench.registry import METRICS
from vitbench.results.per_image import image_id, publish


@METRICS.register_module()
class PerClassIoUMetric(IoUMetric):
    """``type='vitbench.PerClassIoUMetric'``: the arguments of mmseg's ``IoUMetric``."""

    def process(self, data_batch: dict, data_samples) -> None:
        # mmseg keeps one result per image (vitbench/compat/mmseg.py); the image's name travels with it, so that
        # the results gathered from every rank stay paired with their names
        start = len(self.results)
        super().process(data_batch, data_samples)
        added = data_samples[:len(self.results) - start]
        name_iou_results(self.results, start, [image_id(sample.get('img_path') or '') for sample in added])

    def compute_metrics(self, results: list) -> dict:
        names, results = unname_iou_results(results)
        # mmseg returns numpy float32 scalars rounded to 2 decimals: plain floats serialise to JSON
        metrics = {name: round(float(value), 2) for name, value in super().compute_metrics(results).items()}
        if self.format_only:
            return metrics
        intersects, unions = iou_areas(results)
        publish('mIoU', 'iou', [name or str(i) for i, name in enumerate(names)],
                intersect=_pixel_counts(intersects), union=_pixel_counts(unions))
        intersect = sum(intersects).double()
        union = sum(unions).double()
        iou = (intersect / union * 100).tolist()  # 0 / 0 = nan for classes nobody saw
        for name, value in zip(self.dataset_meta['classes'], iou):
            if not math.isnan(value):
                metrics[f'IoU.{name.strip()}'] = round(value, 2)
        return metrics


def _pixel_counts(per_image) -> np.ndarray:
    """(images, classes) pixel counts, as int32 when they fit (they do below 2^31 pixels an image)."""
    counts = torch.stack([torch.as_tensor(c) for c in per_image]).double().cpu().numpy()
    return counts.astype(np.int32 if counts.max(initial=0) < 2 ** 31 else np.int64)
