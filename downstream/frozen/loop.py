"""``FrozenFeatureLoop``: the test loop of frozen-feature evaluation. It computes (or reads from the work dir's
cache, :mod:`.features`) the features of the training collection (``memory_dataloader``) and of the test set, hands
the first to :class:`~.metric.FrozenFeatureMetric` as its memory and the second to the evaluator, and reports the
metrics to the hooks as mmengine's ``TestLoop`` does (``ResultRecorderHook`` writes result.json and
per_image.npz)."""
from typing import Union

from mmengine.dist import get_rank, get_world_size
from mmengine.runner import TestLoop

from vitbench.registry import LOOPS

from .features import cached_features
from .metric import FrozenFeatureMetric


@LOOPS.register_module()
class FrozenFeatureLoop(TestLoop):
    """Args:
        memory_dataloader: the training collection (the k-NN's neighbours, retrieval's database, the probe's data):
            a dataloader or its config.
        runner, dataloader, evaluator: as mmengine's ``TestLoop`` (the test set and ``FrozenFeatureMetric``).
    """

    def __init__(self, runner, dataloader, evaluator, memory_dataloader: Union[dict, object], fp16: bool = False):
        super().__init__(runner, dataloader, evaluator, fp16=fp16)
        self.memory_dataloader = (runner.build_dataloader(memory_dataloader, seed=runner.seed)
                                  if isinstance(memory_dataloader, dict) else memory_dataloader)
        metrics = [m for m in self.evaluator.metrics if isinstance(m, FrozenFeatureMetric)]
        if not metrics:
            raise TypeError('FrozenFeatureLoop: test_evaluator must hold a FrozenFeatureMetric, got '
                            f'{[type(m).__name__ for m in self.evaluator.metrics]}')
        self.metrics = metrics

    def run(self) -> dict:
        self._record_the_weights_origin()
        self.runner.call_hook('before_test')
        self.runner.call_hook('before_test_epoch')
        model = self.runner.model
        model = getattr(model, 'module', model)
        work_dir = self.runner.work_dir
        memory = cached_features(model, self.memory_dataloader, work_dir)
        classes = len(self.memory_dataloader.dataset.metainfo.get('classes') or ()) or int(memory['labels'].max()) + 1
        for metric in self.metrics:
            metric.set_memory(memory['features'], memory['labels'], classes)
        test = cached_features(model, self.dataloader, work_dir)
        samples = [dict(feature=f, label=y, id=i) for f, y, i in zip(test['features'], test['labels'], test['ids'])]
        # every process holds the whole test set: each hands the evaluator its share, which the evaluator's
        # collection (mmengine's collect_results, interleaved by rank) puts back in order
        self.evaluator.process(samples[get_rank()::get_world_size()])
        metrics = self.evaluator.evaluate(len(samples))
        self.runner.call_hook('after_test_epoch', metrics=metrics)
        self.runner.call_hook('after_test')
        return metrics

    def _record_the_weights_origin(self) -> None:
        """result.json's ``pretrain`` is what the tested weights came from (their backbone.pth's meta: recipe,
        epochs, data), as a fine-tune's is what its backbone started from: the frozen model is those weights."""
        experiment = self.runner.cfg.get('experiment')
        model_cfg = self.runner.cfg.get('model') or {}
        weights = self.runner.cfg.get('load_from') or model_cfg.get('checkpoint')  # tools/test.py sets load_from
        if experiment is not None and weights and not experiment.get('checkpoint'):
            experiment['checkpoint'] = weights
