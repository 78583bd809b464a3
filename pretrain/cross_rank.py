"""Statistics over the whole batch of a data-parallel run, where each rank holds a slice of it, with gradients
that flow back across ranks: what a contrastive loss over the global batch (MoCo-v3) and its BatchNorm MLPs
need.

Both pieces use the autograd-aware collectives of ``torch.distributed.nn.functional``: the backward of an
all-gather (or all-reduce) sums, on each rank, the gradients that every rank's loss sends to that rank's slice.
DDP then averages the parameter gradients over the ranks, so training follows the gradient of the mean of the
ranks' losses, which is the loss of one process on the concatenated batch (``tests/test_pretrain_mocov3.py``
checks it under torchrun). Without an initialised process group (one process) everything is the plain
single-batch operation.

:class:`GlobalBatchNorm1d` is what ``torch.nn.SyncBatchNorm`` does (MoCo-v3 converts its MLPs' BatchNorms), on
any device and backend: SyncBatchNorm refuses CPU tensors, and so gloo runs.
"""
import warnings
from typing import List

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.nn import functional as dist_nn

from vitbench.refusal import RefusalValueError


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def batch_sizes(x: torch.Tensor) -> List[int]:
    """The first dimension of ``x`` on every rank, in rank order (one collective without gradient)."""
    if world_size() == 1:
        return [x.shape[0]]
    sizes = [torch.zeros(1, dtype=torch.long, device=x.device) for _ in range(world_size())]
    dist.all_gather(sizes, torch.tensor([x.shape[0]], dtype=torch.long, device=x.device))
    return [int(s) for s in sizes]


def _autograd_collective(op, x: torch.Tensor):
    with warnings.catch_warnings():  # deprecated for a private module (_functional_collectives); still public
        warnings.simplefilter('ignore', FutureWarning)
        return op(x)


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """``x`` (B, ...) of every rank concatenated along dim 0 in rank order; gradients reach every rank's slice.

    The ranks' batches must have the same size (``drop_last=True``); a mismatch raises, naming the sizes."""
    if world_size() == 1:
        return x
    sizes = batch_sizes(x)
    if len(set(sizes)) > 1:
        raise RefusalValueError(f'a loss over the whole batch gathers equal slices from every rank, got batch sizes {sizes}: '
                         'use train_dataloader.drop_last=True')
    return torch.cat(_autograd_collective(dist_nn.all_gather, x), dim=0)


def sum_with_grad(x: torch.Tensor) -> torch.Tensor:
    """Element-wise sum of ``x`` over the ranks, differentiable."""
    return x if world_size() == 1 else _autograd_collective(dist_nn.all_reduce, x)


class GlobalBatchNorm1d(nn.BatchNorm1d):
    """BatchNorm1d over (B, C) whose training statistics are those of the whole batch on all ranks.

    Normalises with the biased variance and updates the running statistics with the unbiased one, as
    BatchNorm; evaluation and single-process training are BatchNorm1d itself."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not (self.training and world_size() > 1):
            return super().forward(x)
        if x.dim() != 2:
            raise ValueError(f'GlobalBatchNorm1d normalises (batch, channels) inputs, got shape {tuple(x.shape)}')
        x = x.float()
        with torch.no_grad():
            count = sum_with_grad(torch.tensor([float(x.shape[0])], device=x.device))
        mean = sum_with_grad(x.sum(dim=0)) / count
        centred = x - mean
        var = sum_with_grad(centred.pow(2).sum(dim=0)) / count
        out = centred * torch.rsqrt(var + self.eps)
        if self.affine:
            out = out * self.weight + self.bias
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked += 1
                factor = self.momentum if self.momentum is not None else 1. / float(self.num_batches_tracked)
                self.running_mean.lerp_(mean.detach(), factor)
                self.running_var.lerp_(var.detach() * count / (count - 1).clamp(min=1), factor)
        return out

