"""ImageNet-ReaL: the ImageNet val split (ImageFolder layout) with ``real.json`` next to it, the list of each
val image's valid labels in file-number order.

The demo's val images are the demo ImageNet's (same seed, same bytes, so a copy of ``imagenet/val``). Their
ReaL labels: the true class; for every third image also a second class (the next one, standing for a second
object in the picture); every seventh image none, as ReaL leaves out images with no valid label.
"""
from pretrain.imagenet_variants import REAL_FILE, REAL_LAYOUT, VAL_IMAGE, ImageNetReaL

from . import imagenet
from .base import DemoDataset, reader_problems
from .files import save_json


def plan(scale, seed):
    return [item for item in imagenet.plan(scale, seed) if item[0] == 'val']


def real_labels(number, c):
    """The valid labels of val image ``number`` (1-based) of true class ``c``."""
    if number % 7 == 3:
        return []
    return sorted({c, (c + 1) % len(imagenet.WNIDS)}) if number % 3 == 1 else [c]


def finish(root, seed, scale, items, records):
    numbered = {}  # file number -> class, from the demo ImageNet's val file names
    for _, c, k, _ in items:
        numbered[int(VAL_IMAGE.search(imagenet.file_name('val', c, k)).group(1))] = c
    save_json(f'{root}/{REAL_FILE}', [real_labels(n, numbered[n]) for n in sorted(numbered)])


def check(root):
    return reader_problems(ImageNetReaL, root, REAL_FILE)


DATASET = DemoDataset('imagenet_real', 'imagenet_real', REAL_LAYOUT, plan, imagenet.make_item, finish, check)
