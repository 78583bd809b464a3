"""ImageNet-21k (winter 2021, ImageNet-21K-P layout): ``imagenet21k_{train,val}/<wnid>/*.JPEG`` and the class list
file, one WordNet id per line in label order.

The demo has twelve winter-21 synsets. Its class list is deliberately not in sorted order, as a list of another
origin need not be: the label of a folder is its line in the list, and a reader that numbered the sorted folders
would get every demo label but one wrong. Class ``c`` (line ``c``) is drawn as demo ImageNet's class ``c``
(shape, hue). Not part of the demo pipeline; ``tools/make_demo_data.py --datasets imagenet21k`` writes it.
"""
import os

from pretrain.imagenet21k import CLASS_LIST, LAYOUT, SPLITS, ImageNet21k

from . import imagenet, render
from .base import DemoDataset, split_sizes
from .files import save_jpg, save_text

# twelve synsets of the winter-21 list (lines 1, 872, ..., 9581 of timm's imagenet21k_miil_w21_synsets.txt), in an
# order of their own: benthos, green peafowl, oriental cockroach, background, confessional, gymnastic apparatus,
# outrigger, ski lodge, wine cask, boiled egg, silver wattle, Solomon's-seal
WNIDS = ('n04229737', 'n00005787', 'n11757653', 'n02233943', 'n07841495', 'n03090172', 'n12474167', 'n01806467',
         'n04592005', 'n02769075', 'n03861271', 'n03472232')
SIZES = {'tiny': dict(imagenet21k_train=3, imagenet21k_val=1, short=48),  # images per class
         'small': dict(imagenet21k_train=20, imagenet21k_val=5, short=80)}


def file_name(split, c, k):
    return f'{split}/{WNIDS[c]}/{WNIDS[c]}_{k + 1}.JPEG'


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    return [(split, c, k, size['short']) for split in SPLITS for c in range(len(WNIDS)) for k in range(size[split])]


def make_item(root, seed, item):
    split, c, k, short = item
    img = imagenet.class_image(render.item_rng(seed, 'imagenet21k', split, c, k), c, short)
    save_jpg(os.path.join(root, file_name(split, c, k)), img)


def finish(root, seed, scale, items, records):
    save_text(os.path.join(root, CLASS_LIST), WNIDS)


def check(root):
    """The reader's errors (class list, unknown or missing class folders, no images), one per split."""
    problems = []
    for split in SPLITS:
        try:
            ImageNet21k(data_root=root, split=split)
        except (ValueError, FileNotFoundError) as e:
            message = str(e).splitlines()[0]
            if not any(p.endswith(message) for p in problems):  # a bad class list: said once
                problems.append(f'{split}/: {message}')
    return problems


DATASET = DemoDataset('imagenet21k', 'imagenet21k', LAYOUT, plan, make_item, finish, check)
