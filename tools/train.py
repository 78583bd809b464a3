#!/usr/bin/env python
"""Train any vitbench experiment (pretraining, fine-tuning, segmentation, detection, transfer) with
mmengine's Runner.

    python tools/train.py CONFIG [--work-dir DIR] [--resume [CHECKPOINT]] [--amp] [--cfg-options K=V ...]
    torchrun --nproc_per_node N tools/train.py CONFIG --launcher pytorch
"""
import argparse

import torch

from vitbench.engine.cpu_amp import SLOW_BF16, cpu_has_fast_bf16
from vitbench.experiment.cli import ConfigError, add_common_args, build_runner, load_config, run_main


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Train a vitbench config with mmengine')
    add_common_args(parser)
    parser.add_argument('--resume', nargs='?', const='auto', metavar='CHECKPOINT',
                        help='resume training: alone, from the latest checkpoint in the work dir; '
                        'with a path, from that checkpoint')
    parser.add_argument('--checkpoint', dest='backbone_checkpoint', metavar='PATH',
                        help='initialise the backbone from this checkpoint (any supported format)')
    parser.add_argument('--keep-blocks', type=int, metavar='K',
                        help='load only the first K blocks of the backbone weights and re-initialise the rest '
                        '(MAE-lite keep-first-k-blocks; recorded as pretrain.keep_blocks in result.json)')
    parser.add_argument('--amp', action='store_true',
                        help='automatic mixed precision (float16 on GPU, bfloat16 on CPU)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args)
    if args.resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if args.amp:
        if torch.cuda.is_available():
            cfg.optim_wrapper.type = 'AmpOptimWrapper'
            cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')
        else:  # mmengine's AmpOptimWrapper needs a GPU; CPU autocast computes in bfloat16, no loss scaling
            if cfg.get('experiment', {}).get('task') == 'det':
                raise ConfigError(f"{args.config}: --amp without a GPU is not available for detection: mmcv's "
                                  'CPU kernels (nms, RoIAlign) take float32 only; train without --amp')
            if not cpu_has_fast_bf16():  # refused, not replaced by float32: the user asked for mixed precision
                raise ConfigError(f'--amp: {SLOW_BF16}; train without --amp (float32 is the faster choice here)')
            cfg.optim_wrapper.type = 'vitbench.CPUAmpOptimWrapper'
    build_runner(cfg).train()


if __name__ == '__main__':
    run_main(main)
