"""One rank of tests/test_pretrain_dino.py's data-parallel check, run as
``torchrun --nproc_per_node 2 tests/_dino_dist_worker.py OUT_DIR`` on CPU (gloo).

Every rank builds the same DINO, optimiser and global multi-crop batch (tests/_dino_case.py), takes its slice of
the images, and runs one training iteration through DINODistributedDataParallel (the configs' model wrapper):
loss, backward with the gradients averaged across ranks, per-parameter clipping, SGD step, teacher EMA update, and
the centre updated from the teacher's outputs all-reduced over both ranks. Every rank writes its loss, the
centre, the student's and the teacher's parameters after the step to OUT_DIR/rank<r>.pt.
"""
import os
import sys

import torch
import torch.distributed as dist

from _dino_case import GLOBAL_BATCH, build_model, build_optim_wrapper, global_batch
from pretrain.dino import DINODistributedDataParallel


def main(out_dir: str) -> None:
    dist.init_process_group('gloo')
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    per_rank = GLOBAL_BATCH // world
    mine = slice(rank * per_rank, (rank + 1) * per_rank)

    model = build_model()
    wrapper = build_optim_wrapper(model)
    ddp = DINODistributedDataParallel(module=model)
    log_vars = ddp.train_step(dict(inputs=[g[mine] for g in global_batch()], data_samples=None), wrapper)
    loss = torch.as_tensor(log_vars['loss'], dtype=torch.float32)
    torch.save(dict(loss=loss, center=model.center.clone(),
                    student={n: p.detach().clone() for n, p in model.student.named_parameters()},
                    teacher={n: p.detach().clone() for n, p in model.teacher.named_parameters()}),
               os.path.join(out_dir, f'rank{rank}.pt'))
    dist.destroy_process_group()


if __name__ == '__main__':
    main(sys.argv[1])
