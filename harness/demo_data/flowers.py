"""Oxford Flowers-102: ``jpg/image_%05d.jpg`` (the unpacked 102flowers.tgz), ``imagelabels.mat`` and
``setid.mat`` next to it, as the three files of the official download.

``imagelabels.mat``: ``labels``, 1 x N uint8, class 1..102 of image i+1. ``setid.mat``: ``trnid``,
``valid``, ``tstid``, 1 x k uint16 image numbers (1-based). torchvision's Flowers102 reads the same
three items from ``<root>/flowers-102/`` (after its md5 check). Demo class = (petal count, petal hue,
centre colour) of a flower.
"""
import os

import numpy as np

from downstream.transfer.flowers import SETID_KEYS, Flowers102

from . import render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import save_jpg, save_mat

ATTRIBUTES = (6, render.NUM_HUES, 3)  # petals 3..8, hue, centre colour: 216 combinations >= 102 classes
SETS = tuple(dict.fromkeys(k for keys in SETID_KEYS.values() for k in keys))  # setid.mat: trnid, valid, tstid
SIZES = {'tiny': dict(trnid=1, valid=1, tstid=1, short=48),  # images per class and set
         'small': dict(trnid=10, valid=10, tstid=10, short=80)}


def plan(scale, seed):
    """Items (image number, class, split); splits interleave like the real ones (not sorted by class)."""
    size = split_sizes(scale, SIZES)
    pairs = [(c, split) for split in SETS for c in range(Flowers102.NUM_CLASSES)
             for _ in range(size[split])]
    order = render.item_rng(seed, 'flowers102', 'order').permutation(len(pairs))
    return [(i + 1, *pairs[j], size['short']) for i, j in enumerate(order)]


def make_item(root, seed, item):
    number, c, _, short = item
    rng = render.item_rng(seed, 'flowers102', number)
    petals, hue, centre = render.class_attributes(c, ATTRIBUTES)
    img, _ = render.object_image(rng, *render.random_size(rng, short), ('rose', 3 + petals), hue,
                                 centre=centre, fill=(0.5, 0.9), occlude=False)
    save_jpg(os.path.join(root, Flowers102.IMAGES, Flowers102.image_name(number)), img)


def finish(root, seed, scale, items, records):
    labels = np.array([c + 1 for _, c, _, _ in items], np.uint8)  # items are in image-number order
    save_mat(os.path.join(root, Flowers102.LABELS), {'labels': labels})
    save_mat(os.path.join(root, Flowers102.SETID), {
        split: np.array(sorted(n for n, _, s, _ in items if s == split), np.uint16) for split in SETS})


def check(root):
    r = Report(root)
    images, labels_file, setid_file = Flowers102.IMAGES, Flowers102.LABELS, Flowers102.SETID
    have_jpg = r.need_dir(images, f'the images of 102flowers.tgz, {Flowers102.image_name(1)} ...')
    labels = r.load_mat(labels_file, ['labels'])
    ids = r.load_mat(setid_file, list(SETS))
    if labels is not None:
        lab = labels['labels']
        if lab.shape[0] != 1 or not (1 <= lab.min() and lab.max() <= Flowers102.NUM_CLASSES):
            r.add(labels_file, f'labels should be 1 x N with values in 1..{Flowers102.NUM_CLASSES}, got shape '
                               f'{lab.shape}, values {lab.min()}..{lab.max()}')
        n = lab.size
        if have_jpg:
            names = set(list_files(r.path(images), '.jpg'))
            missing = [Flowers102.image_name(i) for i in range(1, n + 1) if Flowers102.image_name(i) not in names]
            for name in missing[:20]:
                r.add(f'{images}/{name}', f'missing ({labels_file} labels it)')
            if len(missing) > 20:
                r.add(f'{images}/', f'... and {len(missing) - 20} more of the {n} labeled images are missing')
        if ids is not None:
            seen = set()
            for split in SETS:
                v = ids[split].ravel().tolist()
                if ids[split].shape[0] != 1 or not all(1 <= i <= n for i in v):
                    r.add(setid_file, f'{split} should be 1 x k image numbers in 1..{n}')
                if seen & set(v):
                    r.add(setid_file, f'{split} shares images with another split')
                seen |= set(v)
    return r.problems


DATASET = DemoDataset('flowers102', 'flowers102', Flowers102.LAYOUT, plan, make_item, finish, check)
