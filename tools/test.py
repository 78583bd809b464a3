#!/usr/bin/env python
"""Evaluate a checkpoint on the test split of any vitbench config with mmengine's Runner.

    python tools/test.py CONFIG CHECKPOINT [--work-dir DIR] [--cfg-options K=V ...] [--launcher ...]
"""
import argparse
import os.path as osp

from vitbench.cli import ConfigError, add_common_args, build_runner, load_config, run_main


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description='Evaluate a checkpoint with a vitbench config')
    add_common_args(parser)
    parser.add_argument('checkpoint', help='checkpoint file to evaluate')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not osp.isfile(args.checkpoint):
        raise ConfigError(f"checkpoint file '{args.checkpoint}' not found")
    cfg = load_config(args)
    cfg.load_from, cfg.resume = args.checkpoint, False
    build_runner(cfg).test()


if __name__ == '__main__':
    run_main(main)
