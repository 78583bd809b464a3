"""ImageNet in ImageFolder layout: ``{train,val}/<wnid>/*.JPEG``, one folder per class.

The demo uses the first 25 ImageNet-1k synsets (sorted wnids, as ImageFolder numbers them). Its pictures share
the visual vocabulary of the demo's downstream sets, so that what pre-training learns is what they need: class
= the kind of the one object in the picture, 25 kinds, the things the other generators draw: COCO's six
categories (coco.parts), ADE20k's tree, building with windows and person, Flowers' roses with 3..8 petals and
the ten shapes of CIFAR. Hue and surface texture (plain / stripes / checker) are random per image and never part
of the class; the object spans 45-90 % of the short side (smaller ones are a few pixels at the 32 px the
demo pre-trains at, and halved its accuracy) and sits on an outdoor backdrop (sky, mountains, grass / road / water as ADE20k paints them) or a dull textured one, with dull occluders.
"""
import os

import numpy as np

from pretrain.data import IMG_EXTENSIONS, LAYOUT, SPLITS

from . import ade20k, coco, render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import save_jpg, save_text

# the first 25 ImageNet-1k synsets (tench, goldfish, great white shark, ...)
WNIDS = (
    'n01440764', 'n01443537', 'n01484850', 'n01491361', 'n01494475', 'n01496331', 'n01498041', 'n01514668',
    'n01514859', 'n01518878', 'n01530575', 'n01531178', 'n01532829', 'n01534433', 'n01537544', 'n01558993',
    'n01560419', 'n01580077', 'n01582220', 'n01592084', 'n01601694', 'n01608432', 'n01614925', 'n01616318',
    'n01622779',
)

KINDS = (('coco', 'person'), ('coco', 'car'), ('coco', 'stop sign'), ('coco', 'sports ball'), ('coco', 'kite'),
         ('coco', 'tv'), ('ade', 'tree'), ('ade', 'building'), ('ade', 'person')) + tuple(
    ('rose', p) for p in range(3, 9)) + tuple(('shape', s) for s in render.SHAPES)
TEXTURES = ('plain', 'stripes', 'checker')  # render.pattern kinds, multiplied onto the object's colours
assert len(WNIDS) == len(KINDS)
SUBSET_FILES = {1: 'subsets/1percent.txt', 10: 'subsets/10percent.txt', 'lt': 'subsets/ImageNet_LT_train.txt'}
LT_DECAY = 0.85  # per rank: 104 images for the first class of the small demo, 2 for its 25th
SIZES = {'tiny': dict(train=4, val=2, short=48), 'small': dict(train=104, val=20, short=80)}  # per class


def file_name(split, c, k):
    if split == 'train':
        return f'train/{WNIDS[c]}/{WNIDS[c]}_{k + 1}.JPEG'
    return f'val/{WNIDS[c]}/ILSVRC2012_val_{k * len(WNIDS) + c + 1:08d}.JPEG'  # val ids interleave classes




def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    return [(split, c, k, size['short']) for split in SPLITS for c in range(len(WNIDS))
            for k in range(size[split])]


def backdrop(rng, h, w):
    """An ADE20k-like outdoor scene without its objects, or a dull textured backdrop (render.background)."""
    if rng.random() < 0.5:
        return render.background(rng, h, w)
    c = ade20k.Canvas(h, w)
    horizon = int(h * rng.uniform(0.25, 0.75))
    ade20k.sky_and_mountains(c, rng, horizon)
    ade20k.ground(c, rng, horizon, rng.choice(['grass', 'road', 'water']), ade20k.Road(rng, h, w, horizon))
    return c.img


def draw(img, rng, kind, cx, cy, r):
    """Paints one object of ``kind`` centred at (cx, cy), about ``r`` in radius; returns its mask."""
    h, w = img.shape[:2]
    family, name = kind
    if family == 'coco':
        mask = np.zeros((h, w), bool)
        for pts, colour, outline in coco.parts(name, rng, cx, cy, r):
            m = render.fill_mask(h, w, [pts])
            render.paint(img, m, colour)
            mask |= m if outline else False
        return mask
    if family == 'ade':
        c = ade20k.Canvas(h, w)
        c.img = img
        if name == 'tree':
            size = 1.25 * r
            ade20k.tree(c, rng, cx, cy + 0.75 * size, size)
        elif name == 'person':
            ade20k.person(c, rng, cx, cy + r, 2 * r)
        else:  # a building: a tinted block with a grid of windows, as ade20k.buildings draws them
            bw, bh = r * rng.uniform(0.8, 1.4), r * rng.uniform(1.2, 2.0)
            x0, y0 = cx - bw / 2, cy - bh / 2
            tint = [(0.03, 0.5, 0.55), (0.1, 0.3, 0.8), (0.0, 0.0, 0.6)][rng.integers(3)]
            c.rect(x0, y0, x0 + bw, y0 + bh, ade20k.BUILDING, render.hsv(*tint) * rng.uniform(0.8, 1.1))
            step, size = max(4.0, bw / rng.uniform(3, 5)), rng.uniform(0.4, 0.6)
            glass = render.hsv(rng.uniform(0.55, 0.65), 0.3, rng.uniform(0.2, 0.45))
            for wy in np.arange(y0 + step * 0.3, y0 + bh - step * size, step):
                for wx in np.arange(x0 + step * 0.3, x0 + bw - step * size, step):
                    c.rect(wx, wy, wx + step * size, wy + step * size, ade20k.WINDOWPANE, glass)
        return c.label > 0
    angle = rng.uniform(0, 2 * np.pi)
    colour = render.hsv(rng.random(), rng.uniform(0.5, 1.0), rng.uniform(0.55, 1.0))  # any hue: not the class
    if family == 'rose':
        mask = render.fill_mask(h, w, [render.rose(name, cx, cy, r, angle)])
        render.paint(img, mask, colour)
        disc = render.fill_mask(h, w, [render.regular_polygon(24, cx, cy, 0.25 * r)])
        render.paint(img, disc, render.CENTRE_COLOURS[rng.integers(3)] * rng.uniform(0.8, 1.0))
        return mask | disc
    polys, holes = render.shape_outline(name, cx, cy, r, angle)
    mask = render.fill_mask(h, w, polys, holes)
    render.paint(img, mask, colour)
    return mask


def picture(rng, h, w, kind, texture):
    img = backdrop(rng, h, w)
    r = 0.5 * min(h, w) * rng.uniform(0.45, 0.9)
    cx, cy = rng.uniform(r * 0.8, w - r * 0.8), rng.uniform(r * 0.8, h - r * 0.8)
    mask = draw(img, rng, kind, cx, cy, r)
    shade = render.pattern(rng, h, w, texture, scale=max(r / 12, 0.6))
    img[mask] *= shade[mask][:, None]
    for _ in range(rng.integers(0, 3)):  # dull occluders: clutter that never carries the class
        ro = r * rng.uniform(0.15, 0.35)
        ox, oy = cx + rng.uniform(-1.2, 1.2) * r, cy + rng.uniform(-1.2, 1.2) * r
        occ = render.fill_mask(h, w, [render.regular_polygon(int(rng.integers(3, 8)), ox, oy, ro,
                                                             rng.uniform(0, 6))])
        render.paint(img, occ, render.dull_colour(rng))
    img *= rng.uniform(0.8, 1.15)  # global lighting
    return render.to_uint8(render.add_noise(rng, img, rng.uniform(2, 6)))


def class_image(rng, c, short):
    """A picture of demo class ``c`` (ImageNet-V2's demo draws the same classes from other streams)."""
    return picture(rng, *render.random_size(rng, short), KINDS[c], TEXTURES[rng.integers(len(TEXTURES))])


def make_item(root, seed, item):
    split, c, k, short = item
    img = class_image(render.item_rng(seed, 'imagenet', split, c, k), c, short)
    save_jpg(os.path.join(root, file_name(split, c, k)), img)


def finish(root, seed, scale, items, records):
    """ImageFolder needs no index files; the subset lists of MAE-lite Table 3 in their release formats
    (:mod:`pretrain.imagenet_subsets`): class-balanced 1 % and 10 % as SimCLR's, a long-tailed one as ImageNet-LT's."""
    per_class = {}
    for split, c, k, _ in items:
        if split == 'train':
            per_class.setdefault(c, []).append(k)
    rng = render.item_rng(seed, 'imagenet', 'subsets')
    for percent in (1, 10):
        names = [file_name('train', c, k).split('/')[-1] for c, ks in sorted(per_class.items())
                 for k in rng.choice(ks, max(1, round(len(ks) * percent / 100)), replace=False)]
        save_text(os.path.join(root, SUBSET_FILES[percent]), [names[i] for i in rng.permutation(len(names))])
    # ImageNet-LT keeps 1280 of the most frequent class's 1300 images and 5 of the rarest's; here the class sizes
    # fall geometrically from all of a class to 2 images, in an order drawn at random
    rank = rng.permutation(len(per_class))
    lines = [f"{file_name('train', c, k)} {c}" for c, ks in sorted(per_class.items())
             for k in sorted(rng.choice(ks, max(2, round(len(ks) * LT_DECAY ** rank[c])), replace=False))]
    save_text(os.path.join(root, SUBSET_FILES['lt']), lines)


def check(root):
    r = Report(root)
    classes = {}
    for split in SPLITS:
        if not r.need_dir(split, 'one sub-folder of images per class'):
            continue
        names = sorted(d for d in os.listdir(r.path(split)) if os.path.isdir(r.path(f'{split}/{d}')))
        if not names:
            r.add(f'{split}/', 'no class folders (expected one per class, e.g. n01440764/)')
        classes[split] = names
        for d in names:
            images = [n for n in list_files(r.path(f'{split}/{d}'), '') if n.lower().endswith(IMG_EXTENSIONS)]
            if not images:  # the extensions the reader takes, so the check passes whatever the reader reads
                r.add(f'{split}/{d}/', f'no images (expected files ending in {IMG_EXTENSIONS})')
            else:  # decoding a million headers is slow; one per class catches wrong formats
                r.image_size(f'{split}/{d}/{images[0]}')
    if len(classes) == 2 and classes['train'] != classes['val']:
        only_train = sorted(set(classes['train']) - set(classes['val']))
        only_val = sorted(set(classes['val']) - set(classes['train']))
        r.add('val/', f'class folders differ from train/ (only in train: {only_train[:5]}, '
              f'only in val: {only_val[:5]}); ImageFolder would number the classes differently')
    return r.problems


DATASET = DemoDataset('imagenet', 'imagenet', LAYOUT, plan, make_item, finish, check)
