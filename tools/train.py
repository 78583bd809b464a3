#!/usr/bin/env python
"""Train any vitbench experiment (pretraining, fine-tuning, segmentation, detection, transfer) with
mmengine's Runner.

    python tools/train.py CONFIG [--work-dir DIR] [--resume [CHECKPOINT]] [--amp [auto]] [--cfg-options K=V ...]
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
    parser.add_argument('--amp', nargs='?', const='on', choices=('on', 'auto'),
                        help='automatic mixed precision (float16 on GPU, bfloat16 on CPU); refused where it cannot '
                        "run or would be slower. '--amp auto': mixed precision where it is available and faster, "
                        'float32 elsewhere (what the demo pipeline uses; result.json records the precision)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args)
    if args.resume == 'auto':
        cfg.resume, cfg.load_from = True, None
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if args.amp:
        use_mixed_precision(cfg, args.config, auto=args.amp == 'auto')
    build_runner(cfg).train()


def use_mixed_precision(cfg, config: str, auto: bool) -> None:
    """Switch ``cfg`` to mixed precision. Where it cannot run or would be slower, ``--amp`` is refused (the
    user asked for it) and ``--amp auto`` keeps float32 and says why."""
    if torch.cuda.is_available():
        cfg.optim_wrapper.type = 'AmpOptimWrapper'
        cfg.optim_wrapper.setdefault('loss_scale', 'dynamic')
        return
    # mmengine's AmpOptimWrapper needs a GPU; CPU autocast computes in bfloat16, no loss scaling
    if cfg.get('experiment', {}).get('task') == 'det':
        why = "mmcv's CPU kernels (nms, RoIAlign) take float32 only"
        if not auto:
            raise ConfigError(f'{config}: --amp without a GPU is not available for detection: {why}; train '
                              'without --amp')
    elif not cpu_has_fast_bf16():
        why = SLOW_BF16
        if not auto:  # refused, not replaced by float32: the user asked for mixed precision
            raise ConfigError(f'--amp: {SLOW_BF16}; train without --amp (float32 is the faster choice here)')
    else:
        cfg.optim_wrapper.type = 'vitbench.CPUAmpOptimWrapper'
        return
    print(f'--amp auto: float32 ({why})', flush=True)


if __name__ == '__main__':
    run_main(main)
