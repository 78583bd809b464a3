"""mmseg's IoUMetric, also returning each class's IoU so that result.json records it.

mmseg computes the per-class IoU but only logs it as a table. Here it is returned as ``IoU.<class>``
(percent, like mIoU). Classes absent from both the ground truth and the predictions have no IoU: they are
left out, as mmseg's mIoU (a nanmean) leaves them out.
"""
import math

from mmseg.evaluation import IoUMetric

from vitbench.registry import METRICS


@METRICS.register_module()
class PerClassIoUMetric(IoUMetric):
    """``type='vitbench.PerClassIoUMetric'``: the arguments of mmseg's ``IoUMetric``."""

    def compute_metrics(self, results: list) -> dict:
        # mmseg returns numpy float32 scalars rounded to 2 decimals: plain floats serialise to JSON
        metrics = {name: round(float(value), 2) for name, value in super().compute_metrics(results).items()}
        if self.format_only:
            return metrics
        intersect = sum(r[0] for r in results).double()
        union = sum(r[1] for r in results).double()
        iou = (intersect / union * 100).tolist()  # 0 / 0 = nan for classes nobody saw
        for name, value in zip(self.dataset_meta['classes'], iou):
            if not math.isnan(value):
                metrics[f'IoU.{name.strip()}'] = round(value, 2)
        return metrics
