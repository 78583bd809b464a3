"""Transfer datasets read each dataset's native on-disk format (the demo generator writes those formats): the
right images, labels and classes, the same as torchvision's readers of the same files, and a clear error
naming the missing or malformed file, with the expected tree, when the layout is broken."""
import json
import os
import pickle
import shutil

import numpy as np
import pytest
import torch
import torchvision.datasets as tvd

import downstream  # noqa: F401  (registers the datasets)
from downstream.transfer import (CIFAR10, CIFAR100, FGVCAircraft, Flowers102, INaturalist, OxfordIIITPet,
                            StanfordCars)
from harness import demo_data
from pretrain.data import DatasetLayoutError


pytestmark = pytest.mark.usefixtures('vitbench_scope')

TRANSFER = ['cifar10', 'cifar100', 'flowers102', 'stanford_cars', 'oxford_iiit_pet', 'fgvc_aircraft', 'inat2018']
PIPELINE = [dict(type='LoadImageOrArray'), dict(type='ResizeCenterCrop', size=32, crop_pct=1.0),
            dict(type='PackInputs')]
FAST = dict(serialize_data=False)  # mmengine's serialisation runs gc.collect(), seconds with mmdet imported


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(TRANSFER), str(root), scale='tiny', log=lambda m: None) == []
    inat2019(root)
    return root


def inat2019(root):
    """iNat 2019 has the 2018 format with other names: train_val2019/, {train,val}2019.json."""
    shutil.copytree(root / 'inat2018' / 'train_val2018', root / 'inat2019' / 'train_val2019')
    for split in ('train', 'val'):
        data = json.loads((root / 'inat2018' / f'{split}2018.json').read_text())
        for image in data['images']:
            image['file_name'] = image['file_name'].replace('train_val2018/', 'train_val2019/')
        (root / 'inat2019' / f'{split}2019.json').write_text(json.dumps(data))


# (class, folder, split arguments, images in the tiny split, classes); the demo has every class of CIFAR,
# Flowers and Pets, and 10 of Cars / Aircraft / iNat (read from the metadata files, as in the real data).
CASES = {
    'cifar10': (CIFAR10, 'cifar10', dict(split='train'), 50, 10),
    'cifar100': (CIFAR100, 'cifar100', dict(split='test'), 100, 100),
    'flowers102': (Flowers102, 'flowers102', dict(split='trainval'), 204, 102),
    'flowers102_test': (Flowers102, 'flowers102', dict(split='test'), 102, 102),
    'cars': (StanfordCars, 'stanford_cars', dict(split='train'), 20, 10),
    'cars_test': (StanfordCars, 'stanford_cars', dict(split='test'), 10, 10),
    'pets': (OxfordIIITPet, 'oxford-iiit-pet', dict(split='trainval'), 37, 37),
    'aircraft': (FGVCAircraft, 'fgvc-aircraft-2013b', dict(split='trainval'), 20, 10),
    'aircraft_family': (FGVCAircraft, 'fgvc-aircraft-2013b', dict(split='test', level='family'), 10, 10),
    'inat2018': (INaturalist, 'inat2018', dict(split='train', year=2018), 20, 10),
    'inat2019': (INaturalist, 'inat2019', dict(split='val', year=2019), 10, 10),
}


@pytest.mark.parametrize('case', CASES)
def test_loads_the_native_format(tiny, case):
    cls, folder, kwargs, size, num_classes = CASES[case]
    extra = {} if case == 'cifar10' else FAST  # CIFAR: in-memory images next to mmengine's serialised list
    ds = cls(data_root=str(tiny / folder), pipeline=PIPELINE, **kwargs, **extra)
    assert len(ds) == size and len(ds.metainfo['classes']) == num_classes
    labels = [ds.get_data_info(i)['gt_label'] for i in range(len(ds))]
    assert set(labels) == set(range(num_classes)) or len(labels) < num_classes  # every class, 0-based
    sample = ds[0]
    assert sample['inputs'].shape == (3, 32, 32) and sample['inputs'].dtype == torch.uint8
    assert int(sample['data_samples']['gt_label']) == labels[0]


def test_class_counts_of_the_real_datasets():
    assert {cls.__name__: cls.OFFICIAL['classes'] for cls in (CIFAR10, CIFAR100, Flowers102, StanfordCars,
                                                                OxfordIIITPet, FGVCAircraft)} == dict(
        CIFAR10=10, CIFAR100=100, Flowers102=102, StanfordCars=196, OxfordIIITPet=37, FGVCAircraft=100)
    assert Flowers102.OFFICIAL['trainval'] == 2040 and StanfordCars.OFFICIAL['train'] == 8144


def test_cifar_pixels_are_the_rgb_planes_of_the_pickle(tiny):
    ds = CIFAR10(data_root=str(tiny / 'cifar10'), split='train', **FAST)
    with open(tiny / 'cifar10' / 'cifar-10-batches-py' / 'data_batch_2', 'rb') as f:
        batch = pickle.load(f, encoding='bytes')
    row = ds.get_data_info(len(batch[b'data']))  # the first image of the second batch
    np.testing.assert_array_equal(row['img'][..., 0], batch[b'data'][0, :1024].reshape(32, 32))  # red plane
    np.testing.assert_array_equal(row['img'][..., 2], batch[b'data'][0, 2048:].reshape(32, 32))  # blue plane
    assert row['gt_label'] == batch[b'labels'][0] and row['img_path'].endswith('data_batch_2[0]')


def torchvision_reader(name, root, monkeypatch):
    """torchvision's dataset for the same files; its md5 checks are bypassed (the demo is not the official
    bytes) and Flowers-102 is looked for under <root>/flowers-102."""
    if name == 'cifar10':
        monkeypatch.setattr(tvd.cifar, 'check_integrity', lambda *args: True)
        return tvd.CIFAR10(str(root / 'cifar10'), train=True), 'train'
    if name == 'flowers102':
        monkeypatch.setattr(tvd.Flowers102, '_check_integrity', lambda self: True)
        os.symlink(root / 'flowers102', root / 'flowers-102')
        return tvd.Flowers102(str(root), split='test'), 'test'
    if name == 'cars':
        return tvd.StanfordCars(str(root), split='test'), 'test'
    if name == 'pets':
        return tvd.OxfordIIITPet(str(root), split='trainval'), 'trainval'
    return tvd.FGVCAircraft(str(root), split='trainval'), 'trainval'


@pytest.mark.parametrize('name,cls,folder', [
    ('cifar10', CIFAR10, 'cifar10'), ('flowers102', Flowers102, 'flowers102'),
    ('cars', StanfordCars, 'stanford_cars'), ('pets', OxfordIIITPet, 'oxford-iiit-pet'),
    ('aircraft', FGVCAircraft, 'fgvc-aircraft-2013b')])
def test_agrees_with_torchvision(tiny, tmp_path, monkeypatch, name, cls, folder):
    root = tmp_path / 'root'
    shutil.copytree(tiny / folder, root / folder, symlinks=True)
    reference, split = torchvision_reader(name, root, monkeypatch)
    ours = cls(data_root=str(root / folder), split=split, **FAST)
    infos = [ours.get_data_info(i) for i in range(len(ours))]
    if name == 'cifar10':
        assert [i['gt_label'] for i in infos] == list(reference.targets)
        np.testing.assert_array_equal(np.stack([i['img'] for i in infos]), reference.data)
    else:
        mine = sorted((os.path.basename(i['img_path']), i['gt_label']) for i in infos)
        theirs = sorted((os.path.basename(str(path)), label) for path, label in _samples(reference))
        assert mine == theirs
    if name in ('cifar10', 'cars', 'aircraft'):  # the same names (Pets: torchvision title-cases them)
        assert list(ours.metainfo['classes']) == list(reference.classes)


def _samples(ds):
    if isinstance(ds, tvd.StanfordCars):
        return ds._samples
    files = ds._images if isinstance(ds, tvd.OxfordIIITPet) else ds._image_files
    return zip(files, ds._labels)


# ---------------------------------------------------------------------------------------- broken layouts
BREAKS = {  # case -> (path to remove, relative to the dataset folder)
    'cifar10': 'cifar-10-batches-py/data_batch_3',
    'cifar100': 'cifar-100-python/meta',
    'flowers102': 'setid.mat',
    'cars': 'devkit/cars_meta.mat',
    'cars_test': 'cars_test_annos_withlabels.mat',
    'pets': 'annotations/test.txt',
    'aircraft': 'data/variants.txt',
    'inat2019': 'val2019.json',
}


@pytest.mark.parametrize('case', BREAKS)
def test_missing_file_is_named_with_the_expected_tree(tiny, tmp_path, case):
    cls, folder, kwargs, _, _ = CASES[case]
    root = tmp_path / folder
    shutil.copytree(tiny / folder, root)
    os.remove(root / BREAKS[case])
    with pytest.raises(DatasetLayoutError) as e:
        cls(data_root=str(root), **kwargs, **FAST)
    message = str(e.value)
    assert f'{root}/{BREAKS[case]}: file not found' in message and '. Expected the layout:\n<data_root>/' in message


@pytest.mark.parametrize('case', ['flowers102', 'cars', 'pets', 'aircraft'])
def test_missing_image_is_named(tiny, tmp_path, case):
    cls, folder, kwargs, _, _ = CASES[case]
    root = tmp_path / folder
    shutil.copytree(tiny / folder, root)
    first = cls(data_root=str(root), **kwargs, **FAST).get_data_info(0)['img_path']
    os.remove(first)
    with pytest.raises(DatasetLayoutError, match=f'{os.path.basename(first)}: image not found'):
        cls(data_root=str(root), **kwargs, **FAST)


def test_wrong_root_and_wrong_split(tiny, tmp_path):
    expected = 'nowhere: folder not found. Expected the layout:\n<data_root>/\n  jpg/'
    with pytest.raises(DatasetLayoutError, match=expected):
        Flowers102(data_root=str(tmp_path / 'nowhere'), split='test', **FAST)
    with pytest.raises(DatasetLayoutError, match='cifar-10-batches-py/batches.meta: file not found'):
        CIFAR10(data_root=str(tiny), split='train', **FAST)  # one level too high
    with pytest.raises(ValueError, match=r"split must be one of \('trainval', 'test'\), got 'train'"):
        OxfordIIITPet(data_root=str(tiny / 'oxford-iiit-pet'), split='train')


def test_malformed_files_are_named(tiny, tmp_path):
    shutil.copytree(tiny / 'cifar100', tmp_path / 'cifar100')
    (tmp_path / 'cifar100' / 'cifar-100-python' / 'test').write_bytes(b'not a pickle')
    with pytest.raises(ValueError, match='cifar-100-python/test: cannot be unpickled'):
        CIFAR100(data_root=str(tmp_path / 'cifar100'), split='test', **FAST)

    shutil.copytree(tiny / 'fgvc-aircraft-2013b', tmp_path / 'aircraft')
    lists = tmp_path / 'aircraft' / 'data' / 'images_variant_test.txt'
    lists.write_text(lists.read_text() + '1234567 Concorde\n')
    with pytest.raises(ValueError, match=r"images_variant_test.txt: line \d+ '1234567 Concorde'.*variants.txt"):
        FGVCAircraft(data_root=str(tmp_path / 'aircraft'), split='test', **FAST)


def test_coarse_label_levels(tiny):
    """CIFAR-100's 20 superclasses from the pickles' coarse_labels; iNaturalist's ranks from categories.json."""
    from harness.demo_data.cifar import CIFAR100_COARSE, FINE_TO_COARSE
    fine = CIFAR100(data_root=str(tiny / 'cifar100'), split='train', **FAST)
    coarse = CIFAR100(data_root=str(tiny / 'cifar100'), split='train', label_level='coarse', **FAST)
    assert coarse.metainfo['classes'] == CIFAR100_COARSE and len(fine.metainfo['classes']) == 100
    for i in range(len(fine)):
        info = coarse.get_data_info(i)
        assert info['gt_label'] == FINE_TO_COARSE[fine.get_data_info(i)['gt_label']] == info['coarse_label']
    kingdoms = INaturalist(data_root=str(tiny / 'inat2018'), split='train', label_level='kingdom', **FAST)
    assert kingdoms.metainfo['classes'] == ('Animalia', 'Fungi', 'Plantae')
    species = INaturalist(data_root=str(tiny / 'inat2018'), split='train', **FAST)
    names = species.metainfo['classes']
    for i in range(len(species)):
        info = kingdoms.get_data_info(i)
        expected = 'Fungi' if names[info['species_label']] == 'Amanita muscaria' else (
            'Plantae' if names[info['species_label']] in ('Quercus robur', 'Helianthus annuus',
                                                          'Taraxacum officinale') else 'Animalia')
        assert kingdoms.metainfo['classes'][info['gt_label']] == expected
    with pytest.raises(ValueError, match='label_level'):
        INaturalist(data_root=str(tiny / 'inat2018'), split='train', label_level='tribe', **FAST)
    with pytest.raises(ValueError, match='label_level'):
        CIFAR100(data_root=str(tiny / 'cifar100'), split='train', label_level='superclass', **FAST)
