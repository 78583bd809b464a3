"""One rank of tests/test_pretrain_mocov3.py's data-parallel check, run as
``torchrun --nproc_per_node 2 tests/_mocov3_dist_worker.py OUT_DIR`` on CPU (gloo).

Every rank builds the same MoCoV3 and the same global batch (seeded), takes its slice, and runs one step through
mmengine's MMDistributedDataParallel: forward in 'loss' mode, backward (DDP averages the gradients). Rank 0
writes the rank-averaged loss, the parameter gradients and the momentum encoder's state to OUT_DIR/rank0.pt; every
rank also computes the bare contrastive loss of its slices of given queries and keys and writes their gradients
to OUT_DIR/rank<r>.pt.
"""
import os
import sys

import torch
import torch.distributed as dist
from mmengine.model import MMDistributedDataParallel

from _mocov3_case import GLOBAL_BATCH, build_model, global_batch, query_key_case
from pretrain.mocov3 import contrastive_loss


def main(out_dir: str) -> None:
    dist.init_process_group('gloo')
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    per_rank = GLOBAL_BATCH // world
    mine = slice(rank * per_rank, (rank + 1) * per_rank)

    model = build_model()
    model.momentum = 0.9  # an update that moves the momentum encoder
    ddp = MMDistributedDataParallel(module=model)
    losses = ddp(global_batch()[mine], mode='loss')
    losses['loss'].backward()
    loss = losses['loss'].detach().clone()
    dist.all_reduce(loss)

    q, k = query_key_case()
    q_mine, k_mine = q[mine].detach().requires_grad_(), k[mine].detach().requires_grad_()
    bare = contrastive_loss(q_mine, k_mine, 0.2)
    bare.backward()
    bare_total = bare.detach().clone()
    dist.all_reduce(bare_total)

    out = dict(bare_loss=bare_total / world, q_grad=q_mine.grad, k_grad=k_mine.grad)
    if rank == 0:
        out.update(loss=loss / world,
                   grads={n: p.grad for n, p in model.named_parameters() if p.grad is not None},
                   momentum_encoder=model.momentum_encoder.state_dict(),
                   running_mean=model.projector[1].running_mean.clone())
    torch.save(out, os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


if __name__ == '__main__':
    main(sys.argv[1])
