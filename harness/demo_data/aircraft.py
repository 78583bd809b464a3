"""FGVC-Aircraft 2013b: ``fgvc-aircraft-2013b/data/images/%07d.jpg`` and its text annotation files.

``images_<level>_<split>.txt`` lines are ``<image id> <name>`` (names may contain spaces) for level in
variant / family / manufacturer and split in train / val / trainval / test; ``variants.txt`` etc. list the
names; ``images_box.txt`` holds ``<image id> xmin ymin xmax ymax``. The folder is named as the tarball
unpacks, which torchvision's FGVCAircraft expects (``FGVCAircraft(root='data/demo')``). The demo has ten
real variants.
"""
import os

import numpy as np

from downstream.transfer.aircraft import LEVELS, FGVCAircraft

from . import render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import save_jpg, save_text

VARIANTS = (  # (variant, family, manufacturer) as named in the real files
    ('707-320', 'Boeing 707', 'Boeing'), ('727-200', 'Boeing 727', 'Boeing'),
    ('737-300', 'Boeing 737', 'Boeing'), ('747-400', 'Boeing 747', 'Boeing'),
    ('A320', 'A320', 'Airbus'), ('A330-300', 'A330', 'Airbus'),
    ('ATR-72', 'ATR-72', 'ATR'), ('CRJ-200', 'CRJ-200', 'Bombardier Aircraft'),
    ('DC-9-30', 'DC-9', 'McDonnell Douglas'), ('Cessna 172', 'Cessna 172', 'Cessna'))
SIZES = {'tiny': dict(train=1, val=1, test=1, short=48), 'small': dict(train=30, val=10, test=10, short=80)}
MEMBERS = dict(train=['train'], val=['val'], trainval=['train', 'val'], test=['test'])  # the images of each list


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    pairs = [(split, c) for split in ('train', 'val', 'test') for c in range(len(VARIANTS))
             for _ in range(size[split])]
    return [(f'{1000001 + i:07d}', split, c, size['short']) for i, (split, c) in enumerate(pairs)]


def make_item(root, seed, item):
    image, _, c, short = item
    rng = render.item_rng(seed, 'fgvc-aircraft', image)
    shape, hue = render.class_attributes(c, (len(render.SHAPES), render.NUM_HUES))
    img, mask = render.object_image(rng, *render.random_size(rng, short), render.SHAPES[shape], hue)
    save_jpg(os.path.join(root, FGVCAircraft.IMAGES, image + '.jpg'), img)
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def finish(root, seed, scale, items, records):
    data = os.path.join(root, FGVCAircraft.DATA)
    for level, names in LEVELS.items():
        col = list(LEVELS).index(level)
        save_text(os.path.join(data, names), list(dict.fromkeys(v[col] for v in VARIANTS)))
        for split in FGVCAircraft.SPLITS:
            save_text(os.path.join(root, FGVCAircraft.SPLIT_LIST.format(level=level, split=split)),
                      [f'{image} {VARIANTS[c][col]}' for image, s, c, _ in items if s in MEMBERS[split]])
    save_text(os.path.join(data, 'images_box.txt'),
              [f'{item[0]} {x0} {y0} {x1} {y1}' for item, (x0, y0, x1, y1) in zip(items, records)])


def check(root):
    r = Report(root)
    have_images = r.need_dir(FGVCAircraft.IMAGES, '<7-digit id>.jpg pictures')
    images = set(n[:-4] for n in list_files(r.path(FGVCAircraft.IMAGES), '.jpg'))
    for level, file_name in LEVELS.items():
        names_file = f'{FGVCAircraft.DATA}/{file_name}'
        if not r.need_file(names_file, f'the {level} names, one per line'):
            continue
        with open(r.path(names_file)) as f:
            names = {n.strip() for n in f}
        for split in FGVCAircraft.SPLITS:
            rel = FGVCAircraft.SPLIT_LIST.format(level=level, split=split)
            if not r.need_file(rel, f'"<image id> <{level} name>" lines'):
                continue
            with open(r.path(rel)) as f:
                for i, text in enumerate(f, 1):
                    image, _, name = text.strip().partition(' ')
                    if name not in names:
                        r.add(rel, f'line {i}: {name!r} is not listed in {names_file}')
                    elif level == 'variant' and have_images and image not in images:
                        r.add(f'{FGVCAircraft.IMAGES}/{image}.jpg', f'missing (listed in {rel})')
    return r.problems


DATASET = DemoDataset('fgvc_aircraft', 'fgvc-aircraft-2013b', FGVCAircraft.LAYOUT, plan, make_item, finish, check)
