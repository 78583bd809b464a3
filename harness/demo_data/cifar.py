"""CIFAR-10 / CIFAR-100 "python version": the pickled batches of the official tarballs.

As described on https://www.cs.toronto.edu/~kriz/cifar.html: each batch unpickles (``encoding='bytes'``)
to a dict with ``b'data'``, a uint8 N x 3072 array whose rows are 32x32 images stored as the 1024 red,
then 1024 green, then 1024 blue values in row-major order, ``b'labels'`` (CIFAR-10) or ``b'fine_labels'``
and ``b'coarse_labels'`` (CIFAR-100), ``b'filenames'`` and ``b'batch_label'``; the meta file holds the
class names. torchvision.datasets.CIFAR10/100(root) read the same files (after their md5 check).
"""
import os
import pickle
from functools import partial

import numpy as np

from downstream.transfer.cifar import CIFAR10 as CIFAR10Reader, CIFAR100 as CIFAR100Reader

from . import render
from .base import DemoDataset, Report, split_sizes
from .files import save_py2_pickle

CIFAR10_CLASSES = ('airplane', 'automobile', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship', 'truck')
# The real CIFAR-100 superclasses with their five classes each; fine and coarse ids are alphabetical.
CIFAR100_SUPERCLASSES = {
    'aquatic_mammals': ('beaver', 'dolphin', 'otter', 'seal', 'whale'),
    'fish': ('aquarium_fish', 'flatfish', 'ray', 'shark', 'trout'),
    'flowers': ('orchid', 'poppy', 'rose', 'sunflower', 'tulip'),
    'food_containers': ('bottle', 'bowl', 'can', 'cup', 'plate'),
    'fruit_and_vegetables': ('apple', 'mushroom', 'orange', 'pear', 'sweet_pepper'),
    'household_electrical_devices': ('clock', 'keyboard', 'lamp', 'telephone', 'television'),
    'household_furniture': ('bed', 'chair', 'couch', 'table', 'wardrobe'),
    'insects': ('bee', 'beetle', 'butterfly', 'caterpillar', 'cockroach'),
    'large_carnivores': ('bear', 'leopard', 'lion', 'tiger', 'wolf'),
    'large_man-made_outdoor_things': ('bridge', 'castle', 'house', 'road', 'skyscraper'),
    'large_natural_outdoor_scenes': ('cloud', 'forest', 'mountain', 'plain', 'sea'),
    'large_omnivores_and_herbivores': ('camel', 'cattle', 'chimpanzee', 'elephant', 'kangaroo'),
    'medium_mammals': ('fox', 'porcupine', 'possum', 'raccoon', 'skunk'),
    'non-insect_invertebrates': ('crab', 'lobster', 'snail', 'spider', 'worm'),
    'people': ('baby', 'boy', 'girl', 'man', 'woman'),
    'reptiles': ('crocodile', 'dinosaur', 'lizard', 'snake', 'turtle'),
    'small_mammals': ('hamster', 'mouse', 'rabbit', 'shrew', 'squirrel'),
    'trees': ('maple_tree', 'oak_tree', 'palm_tree', 'pine_tree', 'willow_tree'),
    'vehicles_1': ('bicycle', 'bus', 'motorcycle', 'pickup_truck', 'train'),
    'vehicles_2': ('lawn_mower', 'rocket', 'streetcar', 'tank', 'tractor'),
}
CIFAR100_COARSE = tuple(sorted(CIFAR100_SUPERCLASSES))
CIFAR100_FINE = tuple(sorted(n for names in CIFAR100_SUPERCLASSES.values() for n in names))
FINE_TO_COARSE = {CIFAR100_FINE.index(n): CIFAR100_COARSE.index(s)
                  for s, names in CIFAR100_SUPERCLASSES.items() for n in names}

# Per split: images per class; CIFAR-10's training set is split into five equal batches like the real one.
SIZES = {'cifar10': {'tiny': dict(train=5, test=2), 'small': dict(train=500, test=100)},
         'cifar100': {'tiny': dict(train=2, test=1), 'small': dict(train=50, test=10)}}
# Each version's folder, batch files, keys, splits and layout, as the suite reads them.
READERS = {'cifar10': CIFAR10Reader, 'cifar100': CIFAR100Reader}
# CIFAR-100's superclasses: in the real files, though the suite reads only the fine labels.
COARSE_LABELS_KEY, COARSE_NAMES_KEY = b'coarse_labels', b'coarse_label_names'


def num_classes(name):
    return READERS[name].OFFICIAL['classes']


def labels(name, seed, scale, split):
    """A class-balanced label sequence in a seeded random order, like the shuffled real batches."""
    n = split_sizes(scale, SIZES[name])[split]
    order = np.repeat(np.arange(num_classes(name)), n)
    render.item_rng(seed, name, split, 'order').shuffle(order)
    return order.tolist()


def make_item(name, root, seed, item):
    """One 32x32 image as a CIFAR row: R plane, G plane, B plane, each row-major."""
    split, k, label = item
    rng = render.item_rng(seed, name, split, k)
    shape, hue = render.class_attributes(label, (len(render.SHAPES), render.NUM_HUES))
    img, _ = render.object_image(rng, 32, 32, render.SHAPES[shape], hue, fill=(0.5, 0.9))
    return img.transpose(2, 0, 1).reshape(-1)


def meta(name, per_batch):
    """The meta file's dict, keys in the order of the real one."""
    names_key = READERS[name].NAMES_KEY
    if name == 'cifar10':
        return {b'num_cases_per_batch': per_batch, names_key: [c.encode() for c in CIFAR10_CLASSES],
                b'num_vis': 3072}
    return {names_key: [c.encode() for c in CIFAR100_FINE],
            COARSE_NAMES_KEY: [c.encode() for c in CIFAR100_COARSE]}


def finish(name, root, seed, scale, items, records):
    reader = READERS[name]
    classes = CIFAR10_CLASSES if name == 'cifar10' else CIFAR100_FINE
    out = os.path.join(root, reader.FOLDER)
    for split in reader.SPLITS:
        rows = [(item, rec) for item, rec in zip(items, records) if item[0] == split]
        data, targets = np.stack([rec for _, rec in rows]), [item[2] for item, _ in rows]
        files = [f'{classes[t]}_s_{k + 1:06d}.png'.encode() for k, t in enumerate(targets)]
        batches = reader.FILES[split]
        per = len(rows) // len(batches)
        for b, file in enumerate(batches):
            part = slice(b * per, (b + 1) * per)
            batch = {b'batch_label': f'{split}ing batch {b + 1} of {len(batches)}'.encode(),  # training / testing
                     b'data': data[part], b'filenames': files[part], reader.LABELS_KEY: targets[part]}
            if name == 'cifar100':
                batch[COARSE_LABELS_KEY] = [FINE_TO_COARSE[t] for t in targets[part]]
            save_py2_pickle(os.path.join(out, file), batch)
        if split == 'train':  # CIFAR-10's meta file records the size of a training batch
            save_py2_pickle(os.path.join(out, reader.META), meta(name, per))


def check(name, root):
    reader = READERS[name]
    r = Report(root)
    folder = reader.FOLDER
    if not r.need_dir(folder, f'the unpacked {name} python-version tarball'):
        return r.problems
    label_keys, meta_keys = {reader.LABELS_KEY: num_classes(name)}, {reader.NAMES_KEY: num_classes(name)}
    if name == 'cifar100':
        label_keys[COARSE_LABELS_KEY] = meta_keys[COARSE_NAMES_KEY] = len(CIFAR100_COARSE)
    for batch in [file for split in reader.SPLITS for file in reader.FILES[split]]:
        d = load(r, f'{folder}/{batch}')
        if d is None:
            continue
        data = d.get(b'data')
        if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2
                and data.shape[1] == 3072):
            r.add(f'{folder}/{batch}', "b'data' is not a uint8 N x 3072 array (expected the R, G, B planes "
                                       f"of each 32x32 image), got {getattr(data, 'dtype', type(data))} "
                                       f"{getattr(data, 'shape', '')}")
            continue
        for key, n in label_keys.items():
            values = d.get(key)
            if not (isinstance(values, list) and len(values) == len(data)
                    and all(0 <= v < n for v in values)):
                r.add(f'{folder}/{batch}', f'{key} is not a list of {len(data)} class ids in [0, {n})')
    d = load(r, f'{folder}/{reader.META}')
    for key, n in meta_keys.items():
        if d is not None and len(d.get(key, [])) != n:
            r.add(f'{folder}/{reader.META}', f'{key} should list {n} class names, got {len(d.get(key, []))}')
    return r.problems


def load(r, rel):
    """The unpickled dict (bytes keys, as the official recipe loads it), or None with a problem noted."""
    if not r.need_file(rel, 'a pickled batch of the CIFAR python version'):
        return None
    try:
        with open(r.path(rel), 'rb') as f:
            d = pickle.load(f, encoding='bytes')
    except Exception as e:  # any unpickling failure means the same thing: not a CIFAR batch
        r.add(rel, f'cannot be unpickled ({type(e).__name__}: {e})')
        return None
    if not isinstance(d, dict):
        r.add(rel, f'unpickles to {type(d).__name__}, expected a dict')
        return None
    return d


def plan(name, scale, seed):
    return [(split, k, label) for split in READERS[name].SPLITS
            for k, label in enumerate(labels(name, seed, scale, split))]


def _dataset(name):  # partials, not lambdas: items are made in worker processes
    return DemoDataset(name, name, READERS[name].LAYOUT, partial(plan, name), partial(make_item, name),
                       partial(finish, name), partial(check, name))


CIFAR10 = _dataset('cifar10')
CIFAR100 = _dataset('cifar100')
