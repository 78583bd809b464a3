"""δ1 (the share of images whose predicted depth is within 25 % of the truth), reported as a fraction under
'toydepth/' (the record's fraction_prefixes: result.json stores it as a percentage), and AbsRel (the mean relative
error, a plain ratio)."""
import torch
from mmengine.evaluator import BaseMetric

from vitbench.registry import METRICS


@METRICS.register_module()
class ToyDepthMetric(BaseMetric):
    def process(self, data_batch, data_samples):
        self.results += [(float(s['pred']), float(s['depth'])) for s in data_samples]

    def compute_metrics(self, results):
        pred, depth = torch.tensor(results).T
        ratio = torch.maximum(pred / depth, depth / pred)
        return {'toydepth/delta1': float((ratio < 1.25).float().mean()),
                'abs_rel': float(((pred - depth).abs() / depth).mean())}
