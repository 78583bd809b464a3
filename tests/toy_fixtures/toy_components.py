"""A toy regression task registered in the vitbench registries, for the registry, runner and pipeline tests (imported by
configs through ``custom_imports``; the tests put this folder on PYTHONPATH)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from mmengine.hooks import Hook
from mmengine.model import BaseModel
from torch.utils.data import Dataset

from vitbench.registry import DATASETS, HOOKS, MODELS


@MODELS.register_module()
class ToyRegressor(BaseModel):
    def __init__(self, in_features=4):
        super().__init__()
        self.linear = nn.Linear(in_features, 1)

    def forward(self, inputs, targets, mode='loss'):
        pred = self.linear(inputs)
        if mode == 'loss':
            return dict(loss=nn.functional.mse_loss(pred, targets))
        return pred


@MODELS.register_module()
class TinyProbe(nn.Module):
    """The smallest registered module: what the cross-scope registry test builds."""

    def __init__(self, width=3):
        super().__init__()
        self.width = width


@DATASETS.register_module()
class ToyRegressionDataset(Dataset):
    def __init__(self, size=32, in_features=4):
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(size, in_features, generator=generator)
        self.targets = self.inputs.sum(dim=1, keepdim=True)

    def __len__(self):
        return len(self.inputs)

    def __getitem__(self, index):
        return dict(inputs=self.inputs[index], targets=self.targets[index])


@HOOKS.register_module()
class DumpParametersHook(Hook):
    """Every rank writes its final parameters, so a test can compare the ranks of a distributed run."""

    def after_train(self, runner):
        rank = dist.get_rank() if dist.is_initialized() else 0
        model = runner.model.module if hasattr(runner.model, 'module') else runner.model
        torch.save(model.state_dict(), os.path.join(runner.work_dir, f'params_rank{rank}.pth'))
