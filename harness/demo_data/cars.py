"""Stanford Cars with its devkit: ``cars_{train,test}/%05d.jpg`` and MATLAB annotation structs.

``devkit/cars_meta.mat``: ``class_names``, a 1 x C cell of strings. ``devkit/cars_train_annos.mat`` and
``cars_test_annos_withlabels.mat``: ``annotations``, a 1 x N struct array with fields bbox_x1, bbox_y1,
bbox_x2, bbox_y2 (1-based inclusive pixels), class (1..C) and fname. The folder is named as
torchvision's StanfordCars expects (``StanfordCars(root='data/demo')``). The demo has the first ten
classes of the real 196.
"""
import os

import numpy as np

from downstream.transfer.cars import StanfordCars

from . import render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import mat_cell_row, mat_struct_array, save_jpg, save_mat

CLASSES = ('AM General Hummer SUV 2000', 'Acura RL Sedan 2012', 'Acura TL Sedan 2012', 'Acura TL Type-S 2008',
           'Acura TSX Sedan 2012', 'Acura Integra Type R 2001', 'Acura ZDX Hatchback 2012',
           'Aston Martin V8 Vantage Convertible 2012', 'Aston Martin V8 Vantage Coupe 2012',
           'Aston Martin Virage Convertible 2012')
SIZES = {'tiny': dict(train=2, test=1, short=48), 'small': dict(train=40, test=20, short=80)}  # per class


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    pairs = {s: [c for c in range(len(CLASSES)) for _ in range(size[s])] for s in StanfordCars.SPLITS}
    return [(s, k, c, size['short']) for s in pairs for k, c in enumerate(pairs[s])]


def make_item(root, seed, item):
    split, k, c, short = item
    rng = render.item_rng(seed, 'stanford_cars', split, k)
    shape, hue = render.class_attributes(c, (len(render.SHAPES), render.NUM_HUES))
    img, mask = render.object_image(rng, *render.random_size(rng, short), render.SHAPES[shape], hue)
    save_jpg(os.path.join(root, StanfordCars.IMAGES[split], f'{k + 1:05d}.jpg'), img)
    ys, xs = np.nonzero(mask)
    return int(xs.min()) + 1, int(ys.min()) + 1, int(xs.max()) + 1, int(ys.max()) + 1  # MATLAB: 1-based


def finish(root, seed, scale, items, records):
    save_mat(os.path.join(root, StanfordCars.META), {'class_names': mat_cell_row(CLASSES)})
    for split in StanfordCars.SPLITS:
        annos = [dict(bbox_x1=np.array([[x1]], np.uint16), bbox_y1=np.array([[y1]], np.uint16),
                      bbox_x2=np.array([[x2]], np.uint16), bbox_y2=np.array([[y2]], np.uint16),
                      **{'class': np.array([[c + 1]], np.uint8)}, fname=f'{k + 1:05d}.jpg')
                 for (s, k, c, _), (x1, y1, x2, y2) in zip(items, records) if s == split]
        first = StanfordCars.ANNOTATIONS[split][0]  # where the reader looks first, as the download has it
        save_mat(os.path.join(root, first), {'annotations': mat_struct_array(annos)})
        if split == 'test':  # the devkit's own test file has no labels
            unlabeled = [{k: v for k, v in a.items() if k != 'class'} for a in annos]
            save_mat(os.path.join(root, StanfordCars.UNLABELED_TEST), {'annotations': mat_struct_array(unlabeled)})


def check(root):
    r = Report(root)
    meta = r.load_mat(StanfordCars.META, ['class_names'])
    num_classes = meta['class_names'].size if meta is not None else None
    for split, candidates in StanfordCars.ANNOTATIONS.items():
        rel = next((c for c in candidates if os.path.isfile(r.path(c))), candidates[0])  # where the reader looks
        mat = r.load_mat(rel, ['annotations'])
        folder = StanfordCars.IMAGES[split]
        if mat is None or not r.need_dir(folder, f'the {split} images named as in {rel}'):
            continue
        annos = mat['annotations'].ravel()
        fields = ('bbox_x1', 'bbox_y1', 'bbox_x2', 'bbox_y2', 'class', 'fname')
        if annos.dtype.names is None or not set(fields) <= set(annos.dtype.names):
            r.add(rel, f'annotations should be a struct array with fields {fields}, got {annos.dtype.names}')
            continue
        names = set(list_files(r.path(folder), '.jpg'))
        for a in annos:
            fname, c = str(np.squeeze(a['fname'])), int(np.squeeze(a['class']))
            if fname not in names:
                r.add(f'{folder}/{fname}', f'missing (listed in {rel})')
            if num_classes and not 1 <= c <= num_classes:
                r.add(rel, f'{fname}: class {c} outside 1..{num_classes} ({StanfordCars.META} class_names)')
    return r.problems


DATASET = DemoDataset('stanford_cars', 'stanford_cars', StanfordCars.LAYOUT, plan, make_item, finish, check)
