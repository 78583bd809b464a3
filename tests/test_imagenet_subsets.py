"""ImageNet-1k training subsets (MAE-lite Table 3): the shipped 1 % / 10 % lists, both release formats, the demo's
lists, the errors, and a pre-training on a subset that the leaderboard tells apart from the full set's."""
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import pretrain  # noqa: F401  (registers the components)
from harness import demo_data
from harness.demo_data.imagenet import SUBSET_FILES, WNIDS
from pretrain.data import ImageNet
from pretrain.export import pretraining_of
from pretrain.imagenet_subsets import SHIPPED, SubsetError
from vitbench.results.table import build_table, recipe_label

pytestmark = pytest.mark.usefixtures('vitbench_scope')
REPO = Path(__file__).resolve().parents[1]
# the files as google-research/simclr imagenet_subsets/ holds them (commit 383d4143), byte for byte
SHA256 = {'imagenet_1percent': '71e82a48ba78252683ae334c4d019ebd5c6e855b9599c1389fbe83eb9549cf17',
          'imagenet_10percent': '6d09de11e7bdaf5b1f3b1f249b6183695f97310cdd20f0c03e7235b6b9392091'}


@pytest.fixture(scope='module')
def imagenet(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def labels(dataset):
    return [dataset.get_data_info(i)['gt_label'] for i in range(len(dataset))]


@pytest.mark.parametrize('name, images, per_class', [('imagenet_1percent', 12811, (12, 13)),
                                                     ('imagenet_10percent', 128116, (128, 129))])
def test_the_shipped_lists_are_simclrs_class_balanced_subsets(name, images, per_class):
    data = Path(SHIPPED[name]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256[name]
    names = data.decode().split()
    assert len(names) == len(set(names)) == images
    assert all(re.fullmatch(r'n\d{8}_\d+\.JPEG', n) for n in names)
    counts = collections.Counter(n.split('_')[0] for n in names)
    assert len(counts) == 1000 and (min(counts.values()), max(counts.values())) == per_class


def test_the_demo_lists_are_balanced_and_long_tailed_and_keep_the_full_labels(imagenet):
    full = ImageNet(imagenet, 'train')
    full_label = {full.get_data_info(i)['img_path']: full.get_data_info(i)['gt_label'] for i in range(len(full))}
    counts = {}
    for key, file in SUBSET_FILES.items():
        subset = ImageNet(imagenet, 'train', subset=os.path.join(imagenet, file))
        assert subset.metainfo['classes'] == full.metainfo['classes'] == WNIDS
        for i in range(len(subset)):  # each image keeps the label it has in the full set
            info = subset.get_data_info(i)
            assert full_label[info['img_path']] == info['gt_label']
        counts[key] = sorted(collections.Counter(labels(subset)).values())
    assert counts[1] == counts[10] == [1] * len(WNIDS)  # the tiny demo has 4 images a class: at least one kept
    assert counts['lt'][0] == 2 and counts['lt'][-1] == 4 and len(counts['lt']) == len(WNIDS)


def test_both_release_formats_are_read(imagenet, tmp_path):
    simclr = tmp_path / 'simclr.txt'
    simclr.write_text(f'{WNIDS[3]}_2.JPEG\n\n{WNIDS[0]}_1.JPEG\n')
    oltr = tmp_path / 'ImageNet_LT_train.txt'
    oltr.write_text(f'train/{WNIDS[3]}/{WNIDS[3]}_2.JPEG 3\ntrain/{WNIDS[0]}/{WNIDS[0]}_1.JPEG 0\n')
    for path in (simclr, oltr):
        subset = ImageNet(imagenet, 'train', subset=str(path))
        assert labels(subset) == [3, 0]
        assert subset.get_data_info(0)['img_path'] == os.path.join(imagenet, 'train', WNIDS[3], f'{WNIDS[3]}_2.JPEG')


@pytest.mark.parametrize('line, message', [
    (f'{WNIDS[0]}_99.JPEG', r'list\.txt:2: .*n01440764_99\.JPEG not found'),
    ('n09999999_1.JPEG', r"list\.txt:2: 'n09999999_1\.JPEG' names class 'n09999999', which is not a class folder"),
    (f'train/{WNIDS[1]}/{WNIDS[1]}_1.JPEG 0', r'list\.txt:2: label 0 for n01443537_1\.JPEG, but n01443537 is class 1'),
    (f'{WNIDS[0]}_1.JPEG', r'list\.txt:2: n01440764_1\.JPEG is listed twice'),
    ('a b c', r"list\.txt:2: expected .*got 'a b c'"),
])
def test_a_bad_list_is_named_with_its_line(imagenet, tmp_path, line, message):
    path = tmp_path / 'list.txt'
    path.write_text(f'{WNIDS[0]}_1.JPEG\n{line}\n')
    with pytest.raises(SubsetError, match=message):
        ImageNet(imagenet, 'train', subset=str(path))


def test_an_unknown_subset_names_the_shipped_ones(imagenet):
    with pytest.raises(SubsetError, match=r"'imagenet_2percent': no such file; expected one of the shipped lists "
                                          r"\['imagenet_10percent', 'imagenet_1percent'\]"):
        ImageNet(imagenet, 'train', subset='imagenet_2percent')


def test_the_pretraining_label_names_data_model_changes_and_finetune_resolution_only():
    assert pretraining_of(dict(dataset='imagenet', backbone_overrides=dict(drop_path_rate=0.1, img_size=192))) == {}
    assert pretraining_of(dict(dataset='imagenet21k')) == dict(data='imagenet21k')
    assert pretraining_of(dict(dataset='imagenet', pretrain=dict(data='imagenet_lt'),
                               backbone_overrides=dict(drop_path_rate=0.1, init_values=None))) == dict(
        data='imagenet_lt', model=dict(init_values=None))
    assert recipe_label(dict(recipe='supervised', epochs=300, model=dict(init_values=None))) == \
        'supervised (init_values=None)'
    assert recipe_label(dict(recipe='mae', data='imagenet_1percent', finetune=dict(mode='full', epochs=300))) == \
        'mae (imagenet_1percent) + ft-full 300ep'
    assert recipe_label(dict(recipe='mae', data='imagenet')) == 'mae'
    # thesis Table 6.12's "ViT-B† @384": the backbone of the ImageNet fine-tune at 384, a row beside the one at 224
    tuned = dict(recipe='supervised', data='imagenet21k', finetune=dict(mode='full', epochs=50, img_size=[384, 384]))
    assert recipe_label(tuned, 224) == 'supervised (imagenet21k) + ft-full 50ep ↑384'
    assert recipe_label(dict(tuned, finetune=dict(tuned['finetune'], img_size=[224, 224])), 224) == \
        'supervised (imagenet21k) + ft-full 50ep'


def test_mae_pretrains_on_a_subset_and_gets_a_row_of_its_own(imagenet, tmp_path):
    """configs/demo/mae_demo_10percent.py through tools/train.py: the list repeated 10 times an epoch (RepeatDataset),
    pretrain.data in result.json and backbone.pth, and the leaderboard row "mae (imagenet_10percent)"."""
    options = ['train_dataloader.dataset.dataset.data_root=' + imagenet,
               f"train_dataloader.dataset.dataset.subset={os.path.join(imagenet, SUBSET_FILES[10])}",
               'val_dataloader.dataset.data_root=' + imagenet, 'val_dataloader.dataset.indices=20',
               'train_dataloader.num_workers=0', 'train_dataloader.persistent_workers=False',
               'val_dataloader.num_workers=0', 'val_dataloader.persistent_workers=False',
               'train_dataloader.batch_size=8', 'val_dataloader.batch_size=10', 'train_cfg.max_epochs=1',
               'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1', 'default_hooks.logger.interval=1']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/mae_demo_10percent.py', '--work-dir',
                             str(tmp_path), '--cfg-options', *options], cwd=REPO, capture_output=True, text=True,
                            timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    # 25 listed images (one a class) x 10 = 250 an epoch, batches of 8 with drop_last: 31 iterations
    assert 'Epoch(train) [1][31/31]' in result.stdout + result.stderr
    record = json.loads((tmp_path / 'result.json').read_text())
    assert record['pretrain'] == dict(recipe='mae', epochs=1, checkpoint=None, data='imagenet_10percent')
    meta = torch.load(tmp_path / 'backbone.pth', weights_only=False)['meta']
    assert meta['pretrain'] == dict(recipe='mae', epochs=1, data='imagenet_10percent')
    shutil.copytree(tmp_path, tmp_path.parent / f'{tmp_path.name}_full')  # the same run, as if on the full set
    full = tmp_path.parent / f'{tmp_path.name}_full' / 'result.json'
    full.write_text(json.dumps(dict(record, pretrain=dict(recipe='mae', epochs=1, checkpoint=None))))
    rows = {row.recipe for row in build_table([str(tmp_path), str(full.parent)]).rows}
    assert rows == {'mae', 'mae (imagenet_10percent)'}
