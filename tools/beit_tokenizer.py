#!/usr/bin/env python
"""Fit the suite's BEiT tokenizer, a k-means codebook of the training set's tokenizer-view patches
(pretrain/beit_tokenizer.py KMeansTokenizer), and write it where the pre-training config's
model.tokenizer.checkpoint says. Run it once before the pre-training:

    python tools/beit_tokenizer.py configs/pretrain/beit_three_things_b12_in1k_300e.py
    python tools/train.py configs/pretrain/beit_three_things_b12_in1k_300e.py --amp

The config's model.tokenizer gives vocab_size, seed and max_images (a seeded choice of training images); the
same config and data give the same file.
"""
import argparse

from mmengine.config import DictAction
from mmengine.registry import init_default_scope

import pretrain  # noqa: F401  (registers the datasets and transforms)
from pretrain.beit_tokenizer_fit import fit_from_file


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', help='a BEiT pre-training config whose model.tokenizer is a KMeansTokenizer')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, default={},
                        help='override config keys, as tools/train.py (e.g. model.tokenizer.max_images=2000)')
    args = parser.parse_args(argv)
    init_default_scope('vitbench')
    fit_from_file(args.config, args.cfg_options)


if __name__ == '__main__':
    main()
