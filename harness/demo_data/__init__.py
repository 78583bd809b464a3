"""Small, learnable demo datasets in the exact on-disk formats of the real ones, and a layout checker.

``tools/make_demo_data.py`` is the command line; this package holds one module per format. Each format is
described once, by the suite's reader of it (pretrain/data.py, downstream/seg/datasets.py,
downstream/det/datasets.py, the modules of downstream/transfer/): the modules here take its layout text and
its file, folder and split names, class counts and extensions from there.
"""
from . import (ade20k, aircraft, cars, cifar, coco, flowers, imagenet, imagenet21k, imagenet_real, imagenet_robustness,
               imagenet_v2, inat, pets)
from .base import SCALES, DemoDataset
from .build import check, format_problems, generate

DATASETS = {ds.name: ds for ds in (
    imagenet.DATASET, imagenet_v2.DATASET, imagenet_real.DATASET, ade20k.DATASET, coco.DATASET, cifar.CIFAR10,
    cifar.CIFAR100, flowers.DATASET, cars.DATASET, pets.DATASET, aircraft.DATASET, inat.DATASET,
    imagenet21k.DATASET, *imagenet_robustness.DATASETS)}


def select(names=None):
    """The DemoDatasets called ``names`` (all when None), with a clear error for an unknown name."""
    if names is None:
        return list(DATASETS.values())
    unknown = [n for n in names if n not in DATASETS]
    if unknown:
        raise ValueError(f'unknown dataset(s) {unknown}; expected some of {list(DATASETS)}')
    return [DATASETS[n] for n in names]


__all__ = ['DATASETS', 'SCALES', 'DemoDataset', 'check', 'format_problems', 'generate', 'select']
