"""Evaluation on extra test sets at the end of a training: ImageNet-V2 and ImageNet-ReaL next to ImageNet val.

``val_cfg = dict(type='ExtraSetsValLoop', extra_sets=[dict(dataset=..., evaluator=...), ...])`` is mmengine's
ValLoop that, after the last validation of a training, also runs the model on each extra set whose data is
present and puts those metrics (e.g. ``accuracy/top1_v2``) into the validation's: the logger prints them and
ResultRecorderHook writes them to result.json with the rest. A set whose ``data_root`` (or ``ann_file`` in it)
does not exist is skipped with one log line, so every ImageNet config can list them. Each extra set is read
with the validation dataloader's settings and pipeline.
"""
import copy
import os.path as osp
from typing import Optional, Sequence

import torch
from mmengine.logging import print_log
from mmengine.runner import ValLoop, autocast

from vitbench.compat.mmengine import built_train_loop, run_val_loop
from vitbench.registry import LOOPS


def missing_path(dataset: dict) -> Optional[str]:
    """The first of the dataset's ``data_root`` and ``data_root/ann_file`` that does not exist, else None."""
    root = dataset.get('data_root', '')
    paths = [root] + ([osp.join(root, dataset['ann_file'])] if dataset.get('ann_file') else [])
    return next((p for p in paths if not osp.exists(p)), None)


@LOOPS.register_module()
class ExtraSetsValLoop(ValLoop):
    """ValLoop plus ``extra_sets`` (each ``dict(dataset=cfg, evaluator=cfg)``) after a training's last
    validation. The sets are built with the loop, at the start of training, so a malformed one fails then."""

    def __init__(self, runner, dataloader, evaluator, fp16: bool = False, extra_sets: Sequence[dict] = ()):
        super().__init__(runner, dataloader, evaluator, fp16)
        val_loader = copy.deepcopy(runner.cfg.val_dataloader)
        self.extra = []
        for extra in extra_sets:
            dataset = dict(extra['dataset'], pipeline=val_loader['dataset']['pipeline'], test_mode=True)
            missing = missing_path(dataset)
            if missing:
                print_log(f"{dataset['type']}: {missing} not found; not evaluated", logger='current')
                continue
            # workers for one pass at the end of training only: none kept alive
            loader = runner.build_dataloader(dict(val_loader, dataset=dataset, persistent_workers=False))
            evaluator = runner.build_evaluator(extra['evaluator'])
            evaluator.dataset_meta = loader.dataset.metainfo
            self.extra.append((loader, evaluator))

    def _last_of_training(self) -> bool:
        train_loop = built_train_loop(self.runner)  # none when no training runs
        return train_loop is not None and self.runner.iter >= train_loop.max_iters

    @torch.no_grad()
    def _evaluate(self, loader, evaluator) -> dict:
        for data_batch in loader:
            with autocast(enabled=self.fp16):
                outputs = self.runner.model.val_step(data_batch)
            evaluator.process(data_samples=outputs, data_batch=data_batch)
        return evaluator.evaluate(len(loader.dataset))

    def _add_extra_metrics(self, metrics: dict) -> None:
        if self._last_of_training():
            for loader, evaluator in self.extra:
                metrics.update(self._evaluate(loader, evaluator))

    def run(self) -> dict:
        # ValLoop.run, with the extra sets' metrics added before the hooks see the metrics
        return run_val_loop(self, self._add_extra_metrics)
