#!/usr/bin/env python
"""Evaluate a checkpoint on the test split of any vitbench config with mmengine's Runner.

    python tools/test.py CONFIG CHECKPOINT [--work-dir DIR] [--cfg-options K=V ...] [--launcher ...]
    python tools/test.py CONFIG CHECKPOINT --tta    # test-time augmentation, e.g. multi-scale + flip
"""
import argparse
import os.path as osp

from backbones.checkpoint import read_checkpoint
from vitbench.experiment.cli import ConfigError, add_common_args, build_runner, load_config, run_main


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Evaluate a checkpoint with a vitbench config')
    add_common_args(parser)
    parser.add_argument('checkpoint', help='checkpoint file to evaluate')
    parser.add_argument('--tta', action='store_true',
                        help="test-time augmentation: the config's tta_pipeline and tta_model "
                        '(segmentation: multi-scale + flip)')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not osp.isfile(args.checkpoint):
        raise ConfigError(f"checkpoint file '{args.checkpoint}' not found")
    cfg = load_config(args)
    cfg.load_from, cfg.resume = args.checkpoint, False
    record_the_tested_training(cfg, args.checkpoint)
    if args.tta:
        use_tta(cfg)
    build_runner(cfg).test()


def record_the_tested_training(cfg, checkpoint: str) -> None:
    """result.json reports the weights tested, not the config's schedule: for a pre-training config, the epochs
    the checkpoint trained (mmengine's ``meta['epoch']``), or a vitbench backbone.pth's own ``meta['pretrain']``;
    the config's where the checkpoint does not say, with a line that says so. (A test of a 2-epoch checkpoint
    with a 40-epoch config used to join the 40-epoch row of the leaderboard.)"""
    experiment = cfg.get('experiment') or {}
    if experiment.get('task') != 'pretrain' or not isinstance(experiment.get('pretrain'), dict):
        return  # a downstream config: its record names the backbone weights it started from (their own meta)
    content = read_checkpoint(checkpoint, mmap=True)
    meta = (content.get('meta') if isinstance(content, dict) else None) or {}
    by_epoch = (cfg.get('train_cfg') or {}).get('by_epoch', True)
    if isinstance(meta.get('pretrain'), dict):
        cfg.experiment.pretrain = dict(experiment['pretrain'], **meta['pretrain'])
    elif by_epoch and isinstance(meta.get('epoch'), int):
        cfg.experiment.pretrain.epochs = meta['epoch']
    else:
        print(f"{checkpoint}: its metadata does not say how many epochs it trained; result.json records the "
              f"config's {experiment['pretrain'].get('epochs')}", flush=True)


def use_tta(cfg) -> None:
    """Wrap the model in the config's ``tta_model``, test with its ``tta_pipeline`` (as mmseg's test.py)."""
    missing = [key for key in ('tta_model', 'tta_pipeline') if key not in cfg]
    if missing:
        raise ConfigError(f'--tta: {cfg.filename} has no {" / ".join(missing)} (e.g. tta_model = '
                          "dict(type='SegTTAModel') and a tta_pipeline with a TestTimeAug transform)")
    cfg.test_dataloader.dataset.pipeline = cfg.tta_pipeline
    cfg.model = dict(cfg.tta_model, module=cfg.model)
    if cfg.get('experiment'):
        cfg.experiment.eval = 'ms'  # result.json: multi-scale (+ flip) evaluation


if __name__ == '__main__':
    run_main(main)
