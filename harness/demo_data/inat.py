"""iNaturalist 2018: ``train_val2018/<supercategory>/<category id>/<md5>.jpg`` with COCO-style json.

``train2018.json`` / ``val2018.json``: ``images`` (id, file_name, width, height, license, rights_holder),
``annotations`` (id, image_id, category_id), ``categories`` (id, name, supercategory), ``info`` and
``licenses``; ``categories.json`` lists the taxonomy (kingdom ... genus) per category id, which DeiT's
INatDataset reads. Category ids are 0-based as in the real files. The demo has ten real species.
"""
import hashlib
import os

from downstream.transfer.inat import INaturalist

from . import render
from .base import DemoDataset, Report, split_sizes
from .files import save_jpg, save_json

SPECIES = (  # (name, supercategory, kingdom, phylum, class, order, family, genus)
    ('Danaus plexippus', 'Insecta', 'Animalia', 'Arthropoda', 'Insecta', 'Lepidoptera', 'Nymphalidae',
     'Danaus'),
    ('Apis mellifera', 'Insecta', 'Animalia', 'Arthropoda', 'Insecta', 'Hymenoptera', 'Apidae', 'Apis'),
    ('Turdus migratorius', 'Aves', 'Animalia', 'Chordata', 'Aves', 'Passeriformes', 'Turdidae', 'Turdus'),
    ('Cardinalis cardinalis', 'Aves', 'Animalia', 'Chordata', 'Aves', 'Passeriformes', 'Cardinalidae',
     'Cardinalis'),
    ('Vulpes vulpes', 'Mammalia', 'Animalia', 'Chordata', 'Mammalia', 'Carnivora', 'Canidae', 'Vulpes'),
    ('Bufo bufo', 'Amphibia', 'Animalia', 'Chordata', 'Amphibia', 'Anura', 'Bufonidae', 'Bufo'),
    ('Amanita muscaria', 'Fungi', 'Fungi', 'Basidiomycota', 'Agaricomycetes', 'Agaricales', 'Amanitaceae',
     'Amanita'),
    ('Quercus robur', 'Plantae', 'Plantae', 'Tracheophyta', 'Magnoliopsida', 'Fagales', 'Fagaceae',
     'Quercus'),
    ('Helianthus annuus', 'Plantae', 'Plantae', 'Tracheophyta', 'Magnoliopsida', 'Asterales', 'Asteraceae',
     'Helianthus'),
    ('Taraxacum officinale', 'Plantae', 'Plantae', 'Tracheophyta', 'Magnoliopsida', 'Asterales', 'Asteraceae',
     'Taraxacum'))
TAXONOMY = ('name', 'supercategory', 'kingdom', 'phylum', 'class', 'order', 'family', 'genus')
YEAR = 2018  # the release the demo copies; 2019 has the same format under other names
SIZES = {'tiny': dict(train=2, val=1, short=48), 'small': dict(train=40, val=10, short=80)}  # per species


def plan(scale, seed):
    size = split_sizes(scale, SIZES)
    pairs = [(split, c) for split in INaturalist.SPLITS for c in range(len(SPECIES)) for _ in range(size[split])]
    return [(i + 1, split, c, size['short']) for i, (split, c) in enumerate(pairs)]


def make_item(root, seed, item):
    image_id, split, c, short = item
    rng = render.item_rng(seed, 'inat2018', image_id)
    shape, hue = render.class_attributes(c, (len(render.SHAPES), render.NUM_HUES))
    h, w = render.random_size(rng, short)
    img, _ = render.object_image(rng, h, w, render.SHAPES[shape], hue)
    digest = hashlib.md5(f'{seed}/{image_id}'.encode()).hexdigest()
    file_name = f'{INaturalist.IMAGES.format(year=YEAR)}/{SPECIES[c][1]}/{c}/{digest}.jpg'
    save_jpg(os.path.join(root, file_name), img)
    return dict(id=image_id, file_name=file_name, width=w, height=h, license=1, rights_holder='vitbench')


def finish(root, seed, scale, items, records):
    categories = [dict(id=c, **dict(zip(TAXONOMY, s))) for c, s in enumerate(SPECIES)]
    save_json(os.path.join(root, 'categories.json'), categories)
    for split in INaturalist.SPLITS:
        mine = [(item, image) for item, image in zip(items, records) if item[1] == split]
        save_json(os.path.join(root, INaturalist.ANNOTATIONS.format(split=split, year=YEAR)), dict(
            info=dict(description='vitbench demo data in the iNaturalist 2018 format', year=2018),
            licenses=[dict(id=1, name='procedurally generated, no restrictions', url='')],
            images=[image for _, image in mine],
            annotations=[dict(id=image['id'], image_id=image['id'], category_id=item[2])
                         for item, image in mine],
            categories=[{k: c[k] for k in ('id', 'name', 'supercategory')} for c in categories]))


def check(root):
    r = Report(root)
    for split in INaturalist.SPLITS:
        rel = INaturalist.ANNOTATIONS.format(split=split, year=YEAR)
        data = r.load_coco_json(rel, 'the COCO-style iNaturalist annotation file')
        if data is None:
            continue
        ids = {c['id'] for c in data['categories']}
        images = {}
        for image in data['images']:
            images[image.get('id')] = image
            if not os.path.isfile(r.path(str(image.get('file_name')))):
                r.add(str(image.get('file_name')), f'missing (listed in {rel})')
        for ann in data['annotations']:
            if ann.get('image_id') not in images or ann.get('category_id') not in ids:
                r.add(rel, f'annotation {ann.get("id")}: image_id or category_id unknown')
    r.need_file('categories.json', 'the taxonomy list read by DeiT\'s INatDataset')
    return r.problems


DATASET = DemoDataset('inat2018', 'inat2018', INaturalist.layout_of(YEAR), plan, make_item, finish, check)
