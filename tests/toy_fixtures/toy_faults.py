"""What the fault-injection tests (tests/test_faults_*.py) add to the toy task: randomness in every place a real
run has it, and a hook that kills its own process with SIGKILL where the environment says.

* ``ToyNoisyRegressionDataset`` augments with Python's ``random``, NumPy's and torch's global generators (in the
  main process, or in each dataloader worker), ``ToyDropoutRegressor`` drops inputs out, ``ToyMSEMetric``
  validates: an interrupted run resumes exactly only if every one of those streams is restored.
* ``DumpMetricsHook`` appends every validation's metrics to ``work_dir/metrics.jsonl`` at full precision.
* ``FaultHook``, from the environment:
  ``VITBENCH_FAULT_KILL_AT_ITER=K``: SIGKILL after iteration K (after that iteration's checkpoint, if any);
  ``VITBENCH_FAULT_KILL_IN_FSYNC=N``: SIGKILL inside the N-th ``os.fsync`` of the training, i.e. while the
  atomic writer holds a complete ``.NAME.XXXX.tmp`` that it has not yet renamed (a checkpoint is one fsync, its
  ``.pth``; ``result.json`` of the toy experiment of 4 checkpoints is the 5th);
  ``VITBENCH_FAULT_SLEEP=S``: sleep S seconds per iteration, so that a test can interrupt a run midway.
"""
import json
import os
import random
import signal
import time

import numpy as np
import torch
import torch.nn as nn
from mmengine.evaluator import BaseMetric
from mmengine.hooks import Hook
from mmengine.model import BaseModel

from toy_components import ToyRegressionDataset
from vitbench.registry import DATASETS, HOOKS, METRICS, MODELS


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


@DATASETS.register_module()
class ToyNoisyRegressionDataset(ToyRegressionDataset):
    def __getitem__(self, index):
        sample = super().__getitem__(index)
        noise = 0.1 * torch.randn(sample['inputs'].shape) + float(np.random.uniform(-0.1, 0.1)) * random.random()
        return dict(sample, inputs=sample['inputs'] + noise)


@MODELS.register_module()
class ToyDropoutRegressor(BaseModel):
    def __init__(self, in_features=4, p=0.3):
        super().__init__()
        self.drop = nn.Dropout(p)
        self.linear = nn.Linear(in_features, 1)

    def forward(self, inputs, targets, mode='loss'):
        pred = self.linear(self.drop(inputs))
        if mode == 'loss':
            return dict(loss=nn.functional.mse_loss(pred, targets))
        return list(torch.cat([pred, targets], dim=1))  # one (prediction, target) row per sample


@METRICS.register_module()
class ToyMSEMetric(BaseMetric):
    default_prefix = 'toy'

    def process(self, data_batch, data_samples):
        self.results.extend(float((row[0] - row[1]) ** 2) for row in data_samples)

    def compute_metrics(self, results):
        return dict(mse=sum(results) / len(results))


@HOOKS.register_module()
class DumpMetricsHook(Hook):
    def after_val_epoch(self, runner, metrics=None):
        with open(os.path.join(runner.work_dir, 'metrics.jsonl'), 'a') as f:
            f.write(json.dumps(dict(iter=runner.iter, **metrics)) + '\n')


@HOOKS.register_module()
class FaultHook(Hook):
    priority = 'LOWEST'  # after the CheckpointHook: a kill after iteration K finds its checkpoint written

    def before_run(self, runner):
        self.sleep = float(os.environ.get('VITBENCH_FAULT_SLEEP', 0))
        self.kill_at = int(os.environ.get('VITBENCH_FAULT_KILL_AT_ITER', 0))
        kill_in_fsync = int(os.environ.get('VITBENCH_FAULT_KILL_IN_FSYNC', 0))
        if kill_in_fsync:
            fsync, calls = os.fsync, []

            def fsync_then_maybe_die(fd):
                calls.append(fd)
                if len(calls) == kill_in_fsync:
                    _die()
                return fsync(fd)

            os.fsync = fsync_then_maybe_die

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        time.sleep(self.sleep)
        if runner.iter + 1 == self.kill_at:
            _die()
