"""mmdet's CocoMetric, also publishing pycocotools' per-image matches for box and mask AP
(:mod:`vitbench.results.coco_ap`, via :mod:`vitbench.results.per_image`): the leaderboard's interval over the test
images from a single run.

mmdet builds its ``COCOeval`` inside ``compute_metrics`` and drops it, so the matches are computed again here, by
pycocotools on the same result files with the same parameters (one more ``evaluate()`` per IoU type). mmdet's
numbers are unchanged.
"""
import contextlib
import io
import os.path as osp
import tempfile

from mmdet.datasets.api_wrappers import COCOeval
from mmdet.evaluation import CocoMetric as MMDetCocoMetric
from mmengine.fileio import load

from vitbench.compat.mmdet import coco_metric_ground_truth
from vitbench.registry import METRICS
from vitbench.results.coco_ap import coco_evidence
from vitbench.results.per_image import publish

_AP_MAX_DETS = 100  # the detections per image behind stats[0], mmdet's '<type>_mAP'


@METRICS.register_module()
class CocoMetric(MMDetCocoMetric):
    """``type='vitbench.CocoMetric'``: the arguments of mmdet's ``CocoMetric``."""

    def compute_metrics(self, results: list) -> dict:
        if self.format_only:
            return super().compute_metrics(results)
        with tempfile.TemporaryDirectory() as tmp:
            # mmdet deletes its own temporary result files before returning: give it a prefix that outlives the call
            own_prefix = self.outfile_prefix is None
            if own_prefix:
                self.outfile_prefix = osp.join(tmp, 'results')
            try:
                metrics = super().compute_metrics(results)
                for iou_type in ('bbox', 'segm'):
                    # absent: not asked for, or mmdet found no predictions at all
                    if iou_type in self.metrics and f'{iou_type}_mAP' in metrics:
                        self._publish_evidence(iou_type, f'{self.outfile_prefix}.{iou_type}.json')
            finally:
                if own_prefix:
                    self.outfile_prefix = None
        return metrics

    def _publish_evidence(self, iou_type: str, result_file: str) -> None:
        if _AP_MAX_DETS not in self.proposal_nums:
            return  # mmdet's mAP is then pycocotools' -1, which result.json leaves out
        predictions = load(result_file)
        if iou_type == 'segm':
            for prediction in predictions:
                prediction.pop('bbox', None)  # as mmdet: the mask's own area, not the box's
        with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints its progress
            ground_truth = coco_metric_ground_truth(self)
            coco_eval = COCOeval(ground_truth, ground_truth.loadRes(predictions), iou_type)
            coco_eval.params.catIds = self.cat_ids
            coco_eval.params.imgIds = self.img_ids
            coco_eval.params.maxDets = list(self.proposal_nums)
            coco_eval.params.iouThrs = self.iou_thrs
            coco_eval.evaluate()
        fields = coco_evidence(coco_eval, max_det=_AP_MAX_DETS)
        publish(f'{iou_type}_mAP', 'coco_ap', fields.pop('ids'), **fields)

