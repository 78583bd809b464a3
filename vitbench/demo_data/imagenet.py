"""ImageNet in ImageFolder layout: ``{train,val}/<wnid>/*.JPEG``, one folder per class.

The demo uses the first ten ImageNet-1k synsets; class = (shape, hue) of the object in the picture.
"""
import os

from pretrain.data import IMG_EXTENSIONS, LAYOUT, SPLITS

from . import render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import save_jpg

# tench, goldfish, great white shark, tiger shark, hammerhead, electric ray, stingray, cock, hen, ostrich
WNIDS = ('n01440764', 'n01443537', 'n01484850', 'n01491361', 'n01494475', 'n01496331', 'n01498041',
         'n01514668', 'n01514859', 'n01518878')
SIZES = {'tiny': dict(train=4, val=2, short=48), 'small': dict(train=260, val=50, short=80)}  # per class


def file_name(split, c, k):
    if split == 'train':
        return f'train/{WNIDS[c]}/{WNIDS[c]}_{k + 1}.JPEG'
    return f'val/{WNIDS[c]}/ILSVRC2012_val_{k * len(WNIDS) + c + 1:08d}.JPEG'  # val ids interleave classes


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    return [(split, c, k, size['short']) for split in SPLITS for c in range(len(WNIDS))
            for k in range(size[split])]


def class_image(rng, c, short):
    """A picture of demo class ``c`` (ImageNet-V2's demo draws the same classes from other streams)."""
    shape, hue = render.class_attributes(c, (len(render.SHAPES), render.NUM_HUES))
    img, _ = render.object_image(rng, *render.random_size(rng, short), render.SHAPES[shape], hue)
    return img


def make_item(root, seed, item):
    split, c, k, short = item
    img = class_image(render.item_rng(seed, 'imagenet', split, c, k), c, short)
    save_jpg(os.path.join(root, file_name(split, c, k)), img)


def finish(root, seed, scale, items, records):
    pass  # ImageFolder needs no index files


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
