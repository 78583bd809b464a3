"""COCO 2017 instances: ``{train,val}2017/%012d.jpg`` and ``annotations/instances_{train,val}2017.json``.

Six of the 80 real COCO categories drawn as simple objects. Outlines are polygons rounded to 2 decimals
like the real files, and the pictures are painted through pycocotools' own rasterisation of those
polygons, so the ground truth is exact: fed back as predictions it scores AP = 1.0. About a quarter
of the images hold a crowd (``iscrowd=1``, uncompressed RLE as in the real files). Instances never
overlap, since an occluded object's visible outline would no longer be its drawn polygon.
"""
import math
import os

import numpy as np
from pycocotools import mask as mask_utils

from downstream.det.datasets import ANNOTATIONS, LAYOUT, SPLITS

from . import render
from .base import DemoDataset, Report, numbered_items
from .files import save_jpg, save_json

# All 80 categories, with their real ids and supercategories, as every instances_*.json lists them: the
# standard 80-class configs and label mapping work unchanged. The demo draws six of them.
_SUPERCATEGORIES = (
    ('person', 'person'), ('vehicle', 'bicycle car motorcycle airplane bus train truck boat'),
    ('outdoor', 'traffic_light fire_hydrant stop_sign parking_meter bench'),
    ('animal', 'bird cat dog horse sheep cow elephant bear zebra giraffe'),
    ('accessory', 'backpack umbrella handbag tie suitcase'),
    ('sports', 'frisbee skis snowboard sports_ball kite baseball_bat baseball_glove skateboard surfboard '
               'tennis_racket'),
    ('kitchen', 'bottle wine_glass cup fork knife spoon bowl'),
    ('food', 'banana apple sandwich orange broccoli carrot hot_dog pizza donut cake'),
    ('furniture', 'chair couch potted_plant bed dining_table toilet'),
    ('electronic', 'tv laptop mouse remote keyboard cell_phone'),
    ('appliance', 'microwave oven toaster sink refrigerator'),
    ('indoor', 'book clock vase scissors teddy_bear hair_drier toothbrush'))
_IDS = [i for i in range(1, 91) if i not in (12, 26, 29, 30, 45, 66, 68, 69, 71, 83)]  # ids COCO skips
_NAMES = [(sup, name.replace('_', ' ')) for sup, names in _SUPERCATEGORIES for name in names.split()]
CATEGORIES = [dict(supercategory=sup, id=i, name=name) for i, (sup, name) in zip(_IDS, _NAMES, strict=True)]
DRAWN = [c for c in CATEGORIES if c['name'] in ('person', 'car', 'stop sign', 'sports ball', 'kite', 'tv')]
FIRST_ID = {'train2017': 1, 'val2017': 100001}  # ids are unique across splits, as in the real data
SIZES = {'tiny': dict(train2017=12, val2017=6, short=96),
         'small': dict(train2017=800, val2017=200, short=128)}


def parts(name, rng, cx, cy, r):
    """(polygon, colour, is_outline) to paint in order; the outlines' union is the instance's mask."""
    hsv, poly = render.hsv, render.regular_polygon
    if name == 'person':  # body and head are separate polygons, as for a partly occluded object
        shirt = hsv(rng.random(), rng.uniform(0.5, 1), rng.uniform(0.4, 0.9))
        return [(poly(20, cx, cy + 0.3 * r, 0.36 * r, ry=0.66 * r), shirt, True),
                (poly(16, cx, cy - 0.66 * r, 0.26 * r), hsv(0.07, 0.45, rng.uniform(0.6, 0.9)), True)]
    if name == 'car':
        x0, L, H = cx - r, 2 * r, 0.9 * r
        paint = hsv(rng.random(), rng.uniform(0.6, 1), rng.uniform(0.5, 0.95))
        box = lambda a, b, c, d: np.array([(a, b), (c, b), (c, d), (a, d)])  # noqa: E731
        return [(box(x0, cy - 0.25 * H, x0 + L, cy + 0.3 * H), paint, True),
                (np.array([(x0 + .2 * L, cy - .25 * H), (x0 + .3 * L, cy - .5 * H),
                           (x0 + .7 * L, cy - .5 * H), (x0 + .8 * L, cy - .25 * H)]), paint, True),
                (poly(14, x0 + 0.22 * L, cy + 0.3 * H, 0.2 * H), hsv(0, 0, 0.1), True),
                (poly(14, x0 + 0.78 * L, cy + 0.3 * H, 0.2 * H), hsv(0, 0, 0.1), True),
                (box(x0 + .34 * L, cy - .45 * H, x0 + .66 * L, cy - .3 * H), hsv(0.55, 0.3, 0.85), False)]
    if name == 'stop sign':
        red = hsv(rng.uniform(-0.02, 0.02) % 1, rng.uniform(0.8, 1), rng.uniform(0.7, 0.95))
        return [(poly(8, cx, cy, r, math.pi / 8), red, True),
                (poly(8, cx, cy, 0.85 * r, math.pi / 8), hsv(0, 0, 0.95), False),
                (poly(8, cx, cy, 0.72 * r, math.pi / 8), red, False)]
    if name == 'sports ball':
        out = [(poly(28, cx, cy, r), hsv(0.1, rng.uniform(0, 0.3), 0.95), True)]
        return out + [(poly(5, cx + dx * r, cy + dy * r, 0.25 * r, rng.uniform(0, 6)), hsv(0, 0, 0.1), False)
                      for dx, dy in ((0, 0), (0.55, 0.3), (-0.5, 0.35), (0.1, -0.6))]
    if name == 'kite':
        a = rng.uniform(-0.4, 0.4)
        pts = render.rotate(np.array([(cx, cy - r), (cx + 0.6 * r, cy - 0.2 * r), (cx, cy + r),
                                      (cx - 0.6 * r, cy - 0.2 * r)]), cx, cy, a)
        hue = rng.random()
        return [(pts, hsv(hue, 0.9, 0.9), True), (pts[[0, 1, 2]], hsv((hue + 0.5) % 1, 0.9, 0.9), False)]
    if name == 'tv':
        frame = np.array([(cx - r, cy - 0.7 * r), (cx + r, cy - 0.7 * r), (cx + r, cy + 0.7 * r),
                          (cx - r, cy + 0.7 * r)])
        return [(frame, hsv(0, 0, rng.uniform(0.05, 0.2)), True),
                ((frame - (cx, cy)) * 0.8 + (cx, cy), hsv(rng.random(), 0.5, rng.uniform(0.7, 1)), False)]
    raise ValueError(f'unknown COCO demo category {name!r}')


def rasterize(polygons, h, w):
    """The instance mask exactly as the COCO API (annToMask, mmdet's poly2mask) will rebuild it."""
    rles = mask_utils.frPyObjects([p.ravel().tolist() for p in polygons], h, w)
    return mask_utils.decode(mask_utils.merge(rles)).astype(bool)


def uncompressed_rle(mask):
    """COCO's crowd encoding: run lengths over the column-major mask, starting with a run of zeros."""
    flat = mask.ravel(order='F').astype(np.int8)
    edges = np.flatnonzero(np.diff(flat)) + 1
    counts = np.diff(np.concatenate([[0], edges, [flat.size]])).tolist()
    return {'counts': ([0] + counts) if flat[0] else counts, 'size': list(mask.shape)}


def place(rng, h, w, boxes, x0, y0, x1, y1):
    """An offset that puts box (x0, y0, x1, y1) inside the image and clear of ``boxes``, or None."""
    if x1 - x0 > w - 6 or y1 - y0 > h - 6:
        return None
    for _ in range(30):
        dx, dy = rng.uniform(2 - x0, w - 3 - x1), rng.uniform(2 - y0, h - 3 - y1)
        box = (x0 + dx, y0 + dy, x1 + dx, y1 + dy)
        if all(box[2] + 2 < a or c + 2 < box[0] or box[3] + 2 < b or d + 2 < box[1] for a, b, c, d in boxes):
            boxes.append(box)
            return np.array([dx, dy])
    return None


def image_with_instances(rng, h, w):
    """A picture and its annotations (without ids) as COCO writes them."""
    img = render.background(rng, h, w)
    boxes, anns = [], []
    if rng.random() < 0.25:  # a crowd: many small people (or balls) annotated as one RLE region
        cat = DRAWN[0] if rng.random() < 0.7 else DRAWN[3]  # person or sports ball
        rw, rh = rng.uniform(0.25, 0.4) * w, rng.uniform(0.2, 0.3) * h
        at = place(rng, h, w, boxes, 0, 0, rw, rh)
        if at is not None:
            mask = np.zeros((h, w), bool)
            for _ in range(rng.integers(4, 9)):
                r = rng.uniform(0.15, 0.3) * min(rw, rh)
                centre = at + (rng.uniform(1.1 * r, rw - 1.1 * r), rng.uniform(1.1 * r, rh - 1.1 * r))
                for pts, colour, outline in parts(cat['name'], rng, *centre, r):
                    m = rasterize([np.round(pts, 2)], h, w)
                    render.paint(img, m, colour)
                    if outline:
                        mask |= m
            box = mask_utils.toBbox(mask_utils.encode(np.asfortranarray(mask.astype(np.uint8))))
            anns.append(dict(segmentation=uncompressed_rle(mask), area=float(mask.sum()), iscrowd=1,
                             bbox=[round(float(v), 2) for v in box], category_id=cat['id']))
    short = min(h, w)
    for _ in range(rng.integers(1, 6)):
        cat = DRAWN[rng.integers(len(DRAWN))]
        r = math.exp(rng.uniform(math.log(0.07 * short), math.log(0.3 * short)))
        drawn = parts(cat['name'], rng, 0.0, 0.0, r)  # drawn around the origin, then moved into place
        xy = np.concatenate([p for p, _, outline in drawn if outline])
        at = place(rng, h, w, boxes, *xy.min(0), *xy.max(0))
        if at is None:
            continue
        drawn = [(np.round(p + at, 2), c, o) for p, c, o in drawn]
        outlines = [p for p, _, o in drawn if o]
        mask = rasterize(outlines, h, w)
        shade = render.pattern(rng, h, w, render.PATTERNS[rng.integers(len(render.PATTERNS))], r / 10)
        for pts, colour, _ in drawn:
            render.paint(img, rasterize([pts], h, w) & mask, colour, shade)
        (x0, y0), (x1, y1) = np.concatenate(outlines).min(0), np.concatenate(outlines).max(0)
        anns.append(dict(segmentation=[[float(v) for v in p.ravel()] for p in outlines],
                         area=float(mask.sum()), iscrowd=0,  # pixels of the mask, as the COCO API counts
                         bbox=[round(float(v), 2) for v in (x0, y0, x1 - x0, y1 - y0)],
                         category_id=cat['id']))
    img *= rng.uniform(0.85, 1.1)
    return render.to_uint8(render.add_noise(rng, img, 3.0)), anns


def plan(scale, seed):
    return numbered_items(scale, SIZES, SPLITS)


def make_item(root, seed, item):
    split, k, short = item
    rng = render.item_rng(seed, 'coco', split, k)
    h, w = render.random_size(rng, short)
    img, anns = image_with_instances(rng, h, w)
    image_id = FIRST_ID[split] + k
    name = f'{image_id:012d}.jpg'
    save_jpg(os.path.join(root, split, name), img)
    image = dict(license=1, file_name=name, coco_url='', height=h, width=w,
                 date_captured='2017-01-01 00:00:00', flickr_url='', id=image_id)
    for j, ann in enumerate(anns):
        ann.update(image_id=image_id, id=image_id * 100 + j)  # unique across the dataset, as in COCO
    return image, anns


def finish(root, seed, scale, items, records):
    for split in SPLITS:
        mine = [rec for item, rec in zip(items, records) if item[0] == split]
        save_json(os.path.join(root, ANNOTATIONS.format(split=split)), dict(
            info=dict(description='vitbench demo data in the COCO 2017 instances format', url='',
                      version='1.0', year=2017, contributor='vitbench tools/make_demo_data.py',
                      date_created='2017/09/01'),
            licenses=[dict(url='', id=1, name='procedurally generated, no restrictions')],
            images=[image for image, _ in mine],
            annotations=[ann for _, anns in mine for ann in anns],
            categories=CATEGORIES))


def check(root):
    r = Report(root)
    for split in SPLITS:
        rel = ANNOTATIONS.format(split=split)
        have_images = r.need_dir(split, f'the {split} JPEGs named by image id')
        data = r.load_coco_json(rel, 'the COCO instances annotation file')
        if data is None:
            continue
        categories = {c.get('id') for c in data['categories']}
        sizes = {}
        for i, image in enumerate(data['images']):
            if not all(k in image for k in ('id', 'file_name', 'width', 'height')):
                r.add(rel, f'images[{i}] lacks one of id, file_name, width, height')
                continue
            sizes[image['id']] = (image['width'], image['height'])
            if have_images:
                size = r.image_size(f'{split}/{image["file_name"]}')
                if size and size != (image['width'], image['height']):
                    r.add(f'{split}/{image["file_name"]}', f'size {size[0]}x{size[1]}, but {rel} says '
                                                            f'{image["width"]}x{image["height"]}')
        for j, ann in enumerate(data['annotations']):
            problem = annotation_problem(ann, sizes, categories)
            if problem:
                r.add(rel, f'annotations[{j}] (id {ann.get("id")}): {problem}')
    return r.problems


def annotation_problem(ann, sizes, categories):
    """What is wrong with one instance annotation, or None."""
    if ann.get('image_id') not in sizes:
        return f'image_id {ann.get("image_id")} is not in images'
    if ann.get('category_id') not in categories:
        return f'category_id {ann.get("category_id")} is not in categories'
    w, h = sizes[ann['image_id']]
    bbox = ann.get('bbox')
    if not (isinstance(bbox, list) and len(bbox) == 4 and bbox[2] > 0 and bbox[3] > 0 and bbox[0] >= -1
            and bbox[1] >= -1 and bbox[0] + bbox[2] <= w + 1 and bbox[1] + bbox[3] <= h + 1):
        return f'bbox {bbox} is not [x, y, width > 0, height > 0] inside the {w}x{h} image'
    if ann.get('iscrowd') not in (0, 1):
        return f'iscrowd {ann.get("iscrowd")!r}, expected 0 or 1'
    seg = ann.get('segmentation')
    if isinstance(seg, dict):
        if seg.get('size') != [h, w] or 'counts' not in seg:
            return f'RLE segmentation needs "counts" and size [{h}, {w}], got size {seg.get("size")}'
    elif not (isinstance(seg, list) and seg and all(len(p) >= 6 and len(p) % 2 == 0 for p in seg)):
        return 'segmentation is neither RLE nor a list of polygons [x1, y1, x2, y2, x3, y3, ...]'
    return None


DATASET = DemoDataset('coco', 'coco', LAYOUT, plan, make_item, finish, check)
