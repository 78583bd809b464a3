"""Oxford-IIIT Pet: ``images/<Breed>_<n>.jpg``, ``annotations/{list,trainval,test}.txt`` and trimaps.

Each annotation line is ``<image> <class 1..37> <species 1=cat 2=dog> <breed id within species>``; cat
breeds are capitalised, dog breeds lower-case, class ids follow the case-insensitive alphabetical order.
Trimaps are 8-bit PNGs: 1 = pet, 2 = background, 3 = border. The folder is named as torchvision's
OxfordIIITPet expects (``OxfordIIITPet(root='data/demo')``).
"""
import os

import numpy as np
from scipy import ndimage

from downstream.transfer.pets import OxfordIIITPet

from . import render
from .base import DemoDataset, Report, list_files, split_sizes
from .files import save_jpg, save_png, save_text

CATS = ('Abyssinian', 'Bengal', 'Birman', 'Bombay', 'British_Shorthair', 'Egyptian_Mau', 'Maine_Coon',
        'Persian', 'Ragdoll', 'Russian_Blue', 'Siamese', 'Sphynx')
DOGS = ('american_bulldog', 'american_pit_bull_terrier', 'basset_hound', 'beagle', 'boxer', 'chihuahua',
        'english_cocker_spaniel', 'english_setter', 'german_shorthaired', 'great_pyrenees', 'havanese',
        'japanese_chin', 'keeshond', 'leonberger', 'miniature_pinscher', 'newfoundland', 'pomeranian', 'pug',
        'saint_bernard', 'samoyed', 'scottish_terrier', 'shiba_inu', 'staffordshire_bull_terrier',
        'wheaten_terrier', 'yorkshire_terrier')
BREEDS = tuple(sorted(CATS + DOGS, key=str.lower))  # class id = index + 1
SIZES = {'tiny': dict(trainval=1, test=1, short=48),  # images per breed and split
         'small': dict(trainval=20, test=10, short=80)}
HEADER = ['#Image CLASS-ID SPECIES BREED ID', '#ID: 1:37 Class ids', '#SPECIES: 1:Cat 2:Dog',
          '#BREED ID: 1-25:Cat 1:12:Dog', '#All images with 1st letter as captial are cat images',
          '#images with small first letter are dog images']


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    items, n = [], 0
    for split in OxfordIIITPet.SPLITS:
        for c in range(len(BREEDS)):
            for k in range(size[split]):
                n += 1
                items.append((split, c, f'{BREEDS[c]}_{n}', size['short']))
    return items


def line(c, image):
    species = 1 if BREEDS[c] in CATS else 2
    breed_id = (CATS if species == 1 else DOGS).index(BREEDS[c]) + 1
    return f'{image} {c + 1} {species} {breed_id}'


def make_item(root, seed, item):
    split, c, image, short = item
    rng = render.item_rng(seed, 'oxford-iiit-pet', image)
    shape, hue = render.class_attributes(c, (len(render.SHAPES), render.NUM_HUES))
    img, mask = render.object_image(rng, *render.random_size(rng, short), render.SHAPES[shape], hue)
    border = ndimage.binary_dilation(mask, iterations=1) & ~ndimage.binary_erosion(mask, iterations=1)
    trimap = np.where(border, 3, np.where(mask, 1, 2)).astype(np.uint8)
    save_jpg(os.path.join(root, OxfordIIITPet.IMAGES, image + '.jpg'), img)
    save_png(os.path.join(root, 'annotations', 'trimaps', image + '.png'), trimap)


def finish(root, seed, scale, items, records):
    lines = {split: [line(c, image) for s, c, image, _ in items if s == split] for split in OxfordIIITPet.SPLITS}
    for split, rel in OxfordIIITPet.ANNOTATIONS.items():
        save_text(os.path.join(root, rel), lines[split])
    save_text(os.path.join(root, 'annotations', 'list.txt'), HEADER + sorted(
        lines['trainval'] + lines['test'], key=lambda s: (s.split()[0].rsplit('_', 1)[0].lower(),
                                                          int(s.split()[0].rsplit('_', 1)[1]))))


def check(root):
    r = Report(root)
    have_images = r.need_dir(OxfordIIITPet.IMAGES, '<Breed>_<n>.jpg pictures')
    have_trimaps = r.need_dir('annotations/trimaps', 'one .png pet / background / border map per image')
    images = set(n[:-4] for n in list_files(r.path(OxfordIIITPet.IMAGES), '.jpg'))
    trimaps = set(n[:-4] for n in list_files(r.path('annotations/trimaps'), '.png'))
    for rel in OxfordIIITPet.ANNOTATIONS.values():
        if not r.need_file(rel, '"<image> <class 1..37> <species 1|2> <breed id>" lines'):
            continue
        with open(r.path(rel)) as f:
            for i, text in enumerate(f, 1):
                fields = text.split()
                if not text.strip() or text.startswith('#'):
                    continue
                if (len(fields) != 4 or not all(v.isdigit() for v in fields[1:])
                        or not 1 <= int(fields[1]) <= len(BREEDS)):
                    r.add(rel, f'line {i} {text.strip()!r}: expected "<image> <class 1..37> <species> '
                               '<breed id>"')
                elif have_images and fields[0] not in images:
                    r.add(f'{OxfordIIITPet.IMAGES}/{fields[0]}.jpg', f'missing (listed in {rel})')
                elif have_trimaps and fields[0] not in trimaps:
                    r.add(f'annotations/trimaps/{fields[0]}.png', f'missing (listed in {rel})')
    return r.problems


DATASET = DemoDataset('oxford_iiit_pet', 'oxford-iiit-pet', OxfordIIITPet.LAYOUT, plan, make_item, finish, check)
