"""ImageNet-V2 (matched frequency) in its release layout: ``<class index>/*.jpeg``, one folder per class named
by its ImageNet-1k index.

The demo draws the demo ImageNet's 25 classes (indices 0..24: its synsets are the first 25) from other random
streams, a few images per class, as V2 re-collects the same classes.
"""
import os

from pretrain.imagenet_variants import V2_FOLDER, V2_LAYOUT, ImageNetV2

from . import imagenet, render
from .base import DemoDataset, reader_problems, split_sizes
from .files import save_jpg

SIZES = {'tiny': dict(images=2, short=48), 'small': dict(images=10, short=80)}  # per class


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    return [(c, k, size['short']) for c in range(len(imagenet.WNIDS)) for k in range(size['images'])]


def make_item(root, seed, item):
    c, k, short = item
    img = imagenet.class_image(render.item_rng(seed, 'imagenet_v2', c, k), c, short)
    save_jpg(os.path.join(root, str(c), f'{c}_{k}.jpeg'), img)  # the release names files by a hash


def finish(root, seed, scale, items, records):
    pass  # the folders are the labels


def check(root):
    return reader_problems(ImageNetV2, root, '')


DATASET = DemoDataset('imagenet_v2', f'imagenet_v2/{V2_FOLDER}', V2_LAYOUT, plan, make_item, finish, check)
