"""ADE20k (SceneParsing release): ``ADEChallengeData2016/{images,annotations}/{training,validation}``.

Images are ``ADE_train_%08d.jpg``; labels the same stem as 8-bit greyscale PNGs, 0 = "other" (ignored
with ``reduce_zero_label=True``) and 1..150 the ADE20k classes. The demo draws outdoor scenes of eleven
real classes; the label map is drawn first and the picture painted from it, so masks are exact. Objects are
drawn large enough to span several 8-pixel patches at the 64 px the demo segments at (buildings with windows of
at least 10 px, trees, cars and people of a fifth to three fifths of the height): smaller, only the colour-told
stuff classes (sky, road, grass, water) are ever found, and features cannot matter.
"""
import os

import numpy as np
from PIL import Image

from downstream.seg.datasets import LAYOUT, NUM_CLASSES, SPLITS

from . import render
from .base import DemoDataset, Report, list_files, numbered_items
from .files import save_jpg, save_png

# Real ADE20k ids (mmseg's ADE20KDataset.METAINFO['classes'][id - 1] is the name).
OTHER, BUILDING, SKY, TREE, ROAD, WINDOWPANE, GRASS, SIDEWALK, PERSON, MOUNTAIN, CAR, WATER = (
    0, 2, 3, 5, 7, 9, 10, 12, 13, 17, 21, 22)
SIZES = {'tiny': dict(training=12, validation=6, short=64), 'small': dict(training=800, validation=200,
                                                                            short=128)}


class Canvas:
    """A picture and its label map, always painted together so they cannot disagree."""

    def __init__(self, h, w):
        self.h, self.w = h, w
        self.img = np.zeros((h, w, 3), np.float32)
        self.label = np.zeros((h, w), np.uint8)

    def put(self, mask, cls, colour, shade=None):
        self.label[mask] = cls
        render.paint(self.img, mask, colour, shade)

    def poly(self, polygons, cls, colour, shade=None):
        self.put(render.fill_mask(self.h, self.w, polygons), cls, colour, shade)

    def rect(self, x0, y0, x1, y1, cls, colour):
        """An axis-aligned box, by slicing: much cheaper than a polygon for dozens of windows."""
        ys = slice(max(0, int(round(y0))), max(0, int(round(y1))))
        xs = slice(max(0, int(round(x0))), max(0, int(round(x1))))
        self.label[ys, xs] = cls
        self.img[ys, xs] = colour


class Road:
    """A trapezoid in perspective: centre and half-width interpolate from the horizon to the bottom."""

    def __init__(self, rng, h, w, horizon):
        self.h, self.horizon = h, horizon
        self.top_x, self.bot_x = rng.uniform(0.3, 0.7) * w, rng.uniform(0.3, 0.7) * w
        self.top_hw, self.bot_hw = rng.uniform(0.02, 0.08) * w, rng.uniform(0.3, 0.6) * w

    def at(self, y):
        s = (y - self.horizon) / (self.h - self.horizon)
        return self.top_x + (self.bot_x - self.top_x) * s, self.top_hw + (self.bot_hw - self.top_hw) * s

    def outline(self, k=1.0):
        """The road's polygon, ``k`` times as wide (a sidewalk is a wider road drawn first)."""
        top, bottom = k * self.top_hw, k * self.bot_hw
        return np.array([(self.top_x - top, self.horizon), (self.top_x + top, self.horizon),
                         (self.bot_x + bottom, self.h + 1), (self.bot_x - bottom, self.h + 1)])


def sky_and_mountains(c, rng, horizon):
    hsv, yy = render.hsv, np.arange(c.h, dtype=np.float32)[:, None]
    t = np.clip(yy / max(horizon, 1), 0, 1)[..., None]  # sky lightens toward the horizon
    top = hsv(rng.uniform(0.55, 0.62), rng.uniform(0.5, 0.8), rng.uniform(0.75, 0.95))
    sky = np.broadcast_to(top * (1 - t) + hsv(0.58, 0.15, 0.95) * t, (c.h, c.w, 3))
    c.label[:horizon], c.img[:horizon] = SKY, sky[:horizon]
    for _ in range(rng.integers(0, 3)):  # clouds are sky in ADE20k
        cx, cy, r = rng.uniform(0, c.w), rng.uniform(0, horizon), rng.uniform(0.05, 0.15) * c.w
        c.poly([render.regular_polygon(24, cx, cy, r, ry=r * 0.4)], SKY, hsv(0, 0, rng.uniform(0.9, 1)))
    if rng.random() < 0.5:
        peaks = [(x, horizon - rng.uniform(0.05, 0.3) * c.h)
                 for x in np.linspace(-2, c.w + 2, int(rng.integers(3, 7)))]
        c.poly([np.array([(-2, horizon + 1)] + peaks + [(c.w + 2, horizon + 1)])], MOUNTAIN,
               hsv(rng.uniform(0.68, 0.8), rng.uniform(0.15, 0.35), rng.uniform(0.35, 0.55)),
               render.pattern(rng, c.h, c.w, 'noise', 0.7))


def ground(c, rng, horizon, kind, road):
    hsv, yy = render.hsv, np.arange(c.h, dtype=np.float32)[:, None]
    below = np.broadcast_to(yy >= horizon, (c.h, c.w))
    if kind == 'water':
        waves = (1 + 0.15 * np.sin(yy * rng.uniform(0.8, 1.5))) * np.ones((1, c.w), np.float32)
        c.put(below, WATER, hsv(rng.uniform(0.52, 0.6), rng.uniform(0.5, 0.8), rng.uniform(0.35, 0.6)), waves)
        return
    c.put(below, GRASS, hsv(rng.uniform(0.22, 0.3), rng.uniform(0.5, 0.75), rng.uniform(0.5, 0.75)),
          render.pattern(rng, c.h, c.w, 'noise', 0.4))
    if kind == 'road':
        if rng.random() < 0.6:
            paving = hsv(rng.uniform(0.05, 0.12), rng.uniform(0.05, 0.2), rng.uniform(0.65, 0.8))
            c.poly([road.outline(1.35)], SIDEWALK, paving, render.pattern(rng, c.h, c.w, 'checker'))
        asphalt = hsv(0, 0, rng.uniform(0.28, 0.42))
        c.poly([road.outline()], ROAD, asphalt, render.pattern(rng, c.h, c.w, 'noise', 2))
        for y0 in np.arange(horizon + 2, c.h, rng.uniform(6, 12)):  # lane dashes are road too
            (x0, hw0), (x1, hw1) = road.at(y0), road.at(y0 + 3)
            c.poly([np.array([(x0 - .03 * hw0, y0), (x0 + .03 * hw0, y0), (x1 + .03 * hw1, y0 + 3),
                              (x1 - .03 * hw1, y0 + 3)])], ROAD, hsv(0.15, 0.1, 0.95))


def buildings(c, rng, horizon):
    for _ in range(rng.integers(1, 4)):
        bw, bh = rng.uniform(0.2, 0.45) * c.w, rng.uniform(0.3, 0.6) * c.h
        x0, y1 = rng.uniform(-0.1, 0.9) * c.w, horizon + 2
        tint = [(0.03, 0.5, 0.55), (0.1, 0.3, 0.8), (0.0, 0.0, 0.6)][rng.integers(3)]  # brick, sand, concrete
        c.rect(x0, y1 - bh, x0 + bw, y1, BUILDING, render.hsv(*tint) * rng.uniform(0.8, 1.1))
        step, size = max(10.0, bw / rng.uniform(2.5, 4)), rng.uniform(0.4, 0.6)
        glass = render.hsv(rng.uniform(0.55, 0.65), 0.3, rng.uniform(0.2, 0.45))
        for wy in np.arange(y1 - bh + step * 0.3, y1 - step, step):
            for wx in np.arange(x0 + step * 0.3, x0 + bw - step * size, step):
                c.rect(wx, wy, wx + step * size, wy + step * size, WINDOWPANE, glass)


def tree(c, rng, x, base, size):
    hsv, polygon = render.hsv, render.regular_polygon
    trunk = hsv(0.07, 0.6, rng.uniform(0.25, 0.4))
    c.rect(x - 0.07 * size, base - 0.6 * size, x + 0.07 * size, base, TREE, trunk)
    crown = [polygon(20, x + dx * size, base - (0.8 + dy) * size, rng.uniform(0.3, 0.45) * size)
             for dx, dy in ((-0.2, 0), (0.2, 0.05), (0, 0.3))]
    c.poly(crown, TREE, hsv(rng.uniform(0.27, 0.36), rng.uniform(0.6, 0.85), rng.uniform(0.25, 0.45)),
           render.pattern(rng, c.h, c.w, 'noise', 0.3))


def car(c, rng, x, base, length):
    hsv, L, H, x0 = render.hsv, length, 0.45 * length, x - 0.5 * length
    paint = hsv(rng.random(), rng.uniform(0.6, 1), rng.uniform(0.5, 0.95))
    c.rect(x0, base - 0.75 * H, x0 + L, base - 0.2 * H, CAR, paint)
    c.poly([np.array([(x0 + .2 * L, base - .72 * H), (x0 + .3 * L, base - H), (x0 + .7 * L, base - H),
                      (x0 + .8 * L, base - .72 * H)])], CAR, paint)
    c.rect(x0 + .33 * L, base - .93 * H, x0 + .67 * L, base - .76 * H, CAR, hsv(0.55, 0.3, 0.85))  # windows
    for wx in (0.22, 0.78):
        c.poly([render.regular_polygon(16, x0 + wx * L, base - 0.2 * H, 0.2 * H)], CAR, hsv(0, 0, 0.1))


def person(c, rng, x, base, height):
    hsv, ph = render.hsv, height
    c.rect(x - 0.12 * ph, base - 0.45 * ph, x + 0.12 * ph, base, PERSON, hsv(0.62, 0.4, 0.25))
    c.rect(x - 0.15 * ph, base - 0.8 * ph, x + 0.15 * ph, base - 0.45 * ph, PERSON,
           hsv(rng.random(), rng.uniform(0.5, 1), rng.uniform(0.5, 1)))
    c.poly([render.regular_polygon(16, x, base - 0.9 * ph, 0.1 * ph)], PERSON, hsv(0.07, 0.45, 0.85))


def scene(rng, h, w):
    """An outdoor scene: sky, maybe mountains, ground of grass / road / water, then buildings, trees,
    cars and people drawn far to near (nearer is lower and bigger), plus unlabeled clutter."""
    c = Canvas(h, w)
    horizon = int(h * rng.uniform(0.3, 0.55))
    sky_and_mountains(c, rng, horizon)
    kind = rng.choice(['grass', 'road', 'water'], p=[0.35, 0.45, 0.2])
    road = Road(rng, h, w, horizon)
    ground(c, rng, horizon, kind, road)
    if rng.random() < 0.6:
        buildings(c, rng, horizon)

    counts = dict(tree=rng.integers(0, 4), car=rng.integers(0, 4), person=rng.integers(0, 3))
    allowed = dict(tree=kind != 'water', car=kind == 'road', person=kind != 'water')
    objects = [(name, rng.uniform(horizon + 3, h + 3)) for name, n in counts.items() if allowed[name]
               for _ in range(n)]
    for name, base in sorted(objects, key=lambda o: o[1]):
        s = (base - horizon) / (h - horizon)  # perspective: 0 at the horizon, 1 at the bottom edge
        centre, half_width = road.at(min(base, h))
        if name == 'tree':
            x, size = rng.uniform(0, w), h * (0.2 + 0.4 * s)
            if kind == 'road' and abs(x - centre) < half_width:  # trees stand beside the road
                x = centre + np.sign(x - centre + 1e-3) * (half_width + size * 0.3)
            tree(c, rng, x, base, size)
        elif name == 'car':
            car(c, rng, centre + rng.uniform(-0.6, 0.6) * half_width, base, h * (0.25 + 0.4 * s))
        else:
            person(c, rng, rng.uniform(0, w), base, h * (0.25 + 0.35 * s))

    for _ in range(rng.integers(0, 3)):  # things ADE20k has no class for: labeled 0 and ignored
        r = rng.uniform(0.03, 0.08) * w
        c.poly([render.regular_polygon(int(rng.integers(3, 7)), rng.uniform(0, w), rng.uniform(0, h), r,
                                       rng.uniform(0, 6))], OTHER, render.hsv(rng.random(), 1, 1))
    c.img *= rng.uniform(0.85, 1.1)
    return render.to_uint8(render.add_noise(rng, c.img, 3.0)), c.label


def stem(split, k):
    return f'ADE_{SPLITS[split]}_{k + 1:08d}'


def plan(scale, seed):
    return numbered_items(scale, SIZES, SPLITS)


def make_item(root, seed, item):
    split, k, short = item
    rng = render.item_rng(seed, 'ade20k', split, k)
    img, label = scene(rng, *render.random_size(rng, short, aspect=(1.0, 1.5)))
    save_jpg(os.path.join(root, 'images', split, stem(split, k) + '.jpg'), img)
    save_png(os.path.join(root, 'annotations', split, stem(split, k) + '.png'), label)


def finish(root, seed, scale, items, records):
    pass  # mmseg pairs images and labels by file name; there is no index file


def check(root):
    r = Report(root)
    for split in SPLITS:
        if not (r.need_dir(f'images/{split}', 'RGB .jpg images')
                & r.need_dir(f'annotations/{split}', '.png label maps, one per image')):
            continue
        images = {n[:-4] for n in list_files(r.path(f'images/{split}'), '.jpg')}
        labels = {n[:-4] for n in list_files(r.path(f'annotations/{split}'), '.png')}
        if not images:
            r.add(f'images/{split}/', 'no .jpg images')
        for s in sorted(images - labels):
            r.add(f'annotations/{split}/{s}.png',
                  f'missing (expected the label map of images/{split}/{s}.jpg)')
        for s in sorted(labels - images):
            r.add(f'images/{split}/{s}.jpg', f'missing (annotations/{split}/{s}.png has no image)')
        for s in sorted(images & labels):
            size = r.image_size(f'images/{split}/{s}.jpg')
            rel = f'annotations/{split}/{s}.png'
            try:
                with Image.open(r.path(rel)) as im:
                    if im.mode not in ('L', 'P'):
                        r.add(rel, f'mode {im.mode}, expected 8-bit single-channel (L) class ids')
                    elif size and im.size != size:
                        r.add(rel, f'size {im.size[0]}x{im.size[1]}, expected {size[0]}x{size[1]} '
                                   f'(the size of images/{split}/{s}.jpg)')
                    elif int(np.asarray(im).max()) > NUM_CLASSES:
                        r.add(rel, f'label {int(np.asarray(im).max())} > {NUM_CLASSES} '
                                   f'(expected 0 = other, 1..{NUM_CLASSES} = ADE20k classes)')
            except OSError as e:
                r.add(rel, f'unreadable label map ({e})')
    return r.problems


DATASET = DemoDataset('ade20k', 'ade20k/ADEChallengeData2016', LAYOUT, plan, make_item, finish, check)
