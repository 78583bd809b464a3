"""ImageNet-A, -R, -Sketch and -C in their release layouts (pretrain/robustness.py), made from the demo ImageNet's
val pictures (same seed, same pixels as ``imagenet/val``), so a model trained on the demo ImageNet is scored on
shifted copies of what it was validated on:

- ImageNet-A: the val pictures of the demo classes that are among ImageNet-A's 200 (7 of the 25), each a
  zoomed-in, off-centre part of the picture (a hard view of it);
- ImageNet-R: the val pictures of the demo classes among ImageNet-R's 200 (10 of the 25) as renditions: a cartoon
  (posterised, inked edges) or a painting (a few flat colours, smoothed);
- ImageNet-Sketch: every demo class, its val pictures as black-on-white line drawings;
- ImageNet-C: a few val pictures per class (square centre crops, as ImageNet-C's are), under eight of the 15
  corruptions at severities 1-5 (:mod:`.corruptions`), file names kept.
"""
import os

import numpy as np
from PIL import Image, ImageFilter, ImageOps

from pretrain.robustness import (A_LAYOUT, C_LAYOUT, CORRUPTIONS, R_LAYOUT, SEVERITIES, SKETCH_LAYOUT, ImageNetA,
                                 ImageNetC, ImageNetR, ImageNetSketch, class_subset)

from . import corruptions, imagenet, render
from .base import DemoDataset, reader_problems, split_sizes
from .files import save_jpg

A_CLASSES = tuple(c for c, wnid in enumerate(imagenet.WNIDS) if wnid in class_subset('imagenet_a'))
R_CLASSES = tuple(c for c, wnid in enumerate(imagenet.WNIDS) if wnid in class_subset('imagenet_r'))
C_SIZES = {'tiny': dict(images=1), 'small': dict(images=2)}  # val pictures per class that ImageNet-C corrupts
assert not set(corruptions.PARAMETERS) - set(CORRUPTIONS)


def val_picture(seed, c, k, short):
    """Demo ImageNet's val picture k of class c, the pixels imagenet/val holds before JPEG encoding."""
    return imagenet.class_image(render.item_rng(seed, 'imagenet', 'val', c, k), c, short)


def val_items(classes, scale, seed, per_class=None):
    size = split_sizes(scale, imagenet.SIZES)
    return [(c, k, size['short']) for c in classes for k in range(per_class or size['val'])]


# ------------------------------------------------------------------------------------------------- restyles
def hard_view(img, rng):
    """ImageNet-A's demo: a random 55-75 % of each side, off centre, enlarged back to the picture's size."""
    h, w = img.shape[:2]
    ch, cw = int(h * rng.uniform(0.55, 0.75)), int(w * rng.uniform(0.55, 0.75))
    y, x = rng.integers(0, h - ch + 1), rng.integers(0, w - cw + 1)
    return np.asarray(Image.fromarray(img[y:y + ch, x:x + cw]).resize((w, h), Image.BICUBIC))


def edges(pil):
    """Where the picture changes sharply (greyscale edge strength, 0..255)."""
    return np.asarray(pil.convert('L').filter(ImageFilter.FIND_EDGES), dtype=np.float32)


def rendition(img, style):
    """ImageNet-R's demo: 'cartoon' (posterised colours, inked edges) or 'painting' (six flat colours, smoothed)."""
    pil = Image.fromarray(img)
    if style == 'cartoon':
        flat = np.asarray(ImageOps.posterize(pil.filter(ImageFilter.MedianFilter(3)), 2), dtype=np.float32)
        ink = (edges(pil) > 48)[..., None]
        return np.where(ink, 20.0, flat).astype(np.uint8)
    painted = pil.quantize(colors=6, method=Image.Quantize.MEDIANCUT).convert('RGB')
    return np.asarray(painted.filter(ImageFilter.ModeFilter(3)))


def sketch(img):
    """ImageNet-Sketch's demo: the picture's edges as dark strokes on white paper."""
    strength = edges(Image.fromarray(img).filter(ImageFilter.SMOOTH))
    paper = 255.0 - np.clip(strength * 3.0, 0, 255)
    return np.repeat(paper.astype(np.uint8)[..., None], 3, axis=-1)


def centre_square(img):
    h, w = img.shape[:2]
    side = min(h, w)
    y, x = (h - side) // 2, (w - side) // 2
    return img[y:y + side, x:x + side]


# ----------------------------------------------------------------------------------------------- generators
def make_a(root, seed, item):
    c, k, short = item
    img = hard_view(val_picture(seed, c, k, short), render.item_rng(seed, 'imagenet_a', c, k))
    save_jpg(os.path.join(root, imagenet.WNIDS[c], f'demo_a_{k}.jpg'), img)


R_STYLES = ('cartoon', 'painting')


def make_r(root, seed, item):
    c, k, short = item
    style = R_STYLES[(c + k) % len(R_STYLES)]  # both styles in every class
    img = rendition(val_picture(seed, c, k, short), style)
    save_jpg(os.path.join(root, imagenet.WNIDS[c], f'{style}_{k}.jpg'), img)


def make_sketch(root, seed, item):
    c, k, short = item
    save_jpg(os.path.join(root, imagenet.WNIDS[c], f'sketch_{k}.JPEG'), sketch(val_picture(seed, c, k, short)))


def make_c(root, seed, item):
    """One val picture under every demo corruption and severity, named as in imagenet/val."""
    c, k, short = item
    img = centre_square(val_picture(seed, c, k, short))
    name = os.path.relpath(imagenet.file_name('val', c, k), 'val')  # <wnid>/ILSVRC2012_val_<n>.JPEG
    for corruption, corrupt in corruptions.CORRUPT.items():
        for severity in SEVERITIES:
            rng = render.item_rng(seed, 'imagenet_c', corruption, severity, c, k)
            save_jpg(os.path.join(root, corruption, str(severity), name), corrupt(img, severity, rng))


def no_index_files(root, seed, scale, items, records):
    pass  # the folders are the labels


def plan_a(scale, seed):
    return val_items(A_CLASSES, scale, seed)


def plan_r(scale, seed):
    return val_items(R_CLASSES, scale, seed)


def plan_sketch(scale, seed):
    return val_items(range(len(imagenet.WNIDS)), scale, seed)


def plan_c(scale, seed):
    return val_items(range(len(imagenet.WNIDS)), scale, seed, split_sizes(scale, C_SIZES)['images'])


def check_a(root):
    return reader_problems(ImageNetA, root, '')


def check_r(root):
    return reader_problems(ImageNetR, root, '')


def check_sketch(root):
    return reader_problems(ImageNetSketch, root, '')


def check_c(root):
    return reader_problems(ImageNetC, root, '')  # the reader wants severities 1-5 of each corruption


IMAGENET_A = DemoDataset('imagenet_a', 'imagenet_a/imagenet-a', A_LAYOUT, plan_a, make_a, no_index_files, check_a)
IMAGENET_R = DemoDataset('imagenet_r', 'imagenet_r/imagenet-r', R_LAYOUT, plan_r, make_r, no_index_files, check_r)
IMAGENET_SKETCH = DemoDataset('imagenet_sketch', 'imagenet_sketch/sketch', SKETCH_LAYOUT, plan_sketch, make_sketch,
                              no_index_files, check_sketch)
IMAGENET_C = DemoDataset('imagenet_c', 'imagenet_c', C_LAYOUT, plan_c, make_c, no_index_files, check_c)
DATASETS = (IMAGENET_A, IMAGENET_R, IMAGENET_SKETCH, IMAGENET_C)
