"""ImageNet-V2 and ImageNet-ReaL (pretrain/imagenet_variants.py): V2's label is its folder's number, ReaL leaves
out images without labels and scores "top-1 ∈ labels", a wrong real.json fails naming the file; their demo
copies pass --check and a broken one fails; a demo training records top1_v2 / top1_real in result.json, and
tools/test.py evaluates a config whose test set is V2."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from PIL import Image

from harness import demo_data
from pretrain.imagenet_variants import REAL_LABELS, ImageNetReaL, ImageNetV2
from pretrain.metrics import ReaLAccuracy

REPO = Path(__file__).resolve().parents[1]
DEMO_SETS = ['imagenet', 'imagenet_v2', 'imagenet_real']


def image(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new('RGB', (8, 8)).save(path)


def samples(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


def test_v2_label_is_the_folder_number_not_its_rank(tmp_path):
    for folder in ('2', '10'):  # sorted as strings, '10' would come first and get label 0
        image(tmp_path / folder / 'a.jpeg')
    labels = {Path(d['img_path']).parent.name: d['gt_label'] for d in samples(ImageNetV2(data_root=str(tmp_path)))}
    assert labels == {'2': 2, '10': 10}


def test_v2_layout_error_shows_the_release_layout(tmp_path):
    image(tmp_path / 'n01440764' / 'a.jpeg')
    with pytest.raises(FileNotFoundError, match=r"(?s)\['n01440764'\] are not class indices.*<class index>/"):
        ImageNetV2(data_root=str(tmp_path))


def real_root(tmp_path, labels):
    for n in range(1, len(labels) + 1):
        image(tmp_path / 'val' / 'n0' / f'ILSVRC2012_val_{n:08d}.JPEG')
    (tmp_path / 'real.json').write_text(json.dumps(labels))
    return str(tmp_path)


def test_real_leaves_out_empty_lists_and_scores_top1_in_labels(tmp_path):
    kept = samples(ImageNetReaL(data_root=real_root(tmp_path, [[3], [], [1, 4], [0]])))
    assert [Path(d['img_path']).name[-10:-5] for d in kept] == ['00001', '00003', '00004']
    assert [d[REAL_LABELS] for d in kept] == [[3], [1, 4], [0]]
    valid = torch.stack([torch.zeros(1000, dtype=torch.bool).index_fill(0, torch.tensor(d[REAL_LABELS]), True)
                         for d in kept])
    # top-1 predictions 3 (in [3]), 4 (in [1, 4]), 2 (not in [0]): 2 of 3 right, by hand 66.67 %
    scores = torch.nn.functional.one_hot(torch.tensor([3, 4, 2]), 1000).float()
    metric = ReaLAccuracy()
    metric.process(dict(data_samples=dict(gt_label=torch.tensor([3, 1, 0]), real_labels=valid)),
                   [dict(pred_score=s, gt_label=torch.tensor(0)) for s in scores])
    assert metric.compute_metrics(metric.results) == pytest.approx(dict(top1_real=200 / 3))


def test_real_json_of_the_wrong_length_names_the_file(tmp_path):
    root = real_root(tmp_path, [[1], [2]])
    (tmp_path / 'real.json').write_text(json.dumps([[1], [2], [3]]))
    with pytest.raises(ValueError, match=r'real\.json has 3 entries, but .* holds 2 ILSVRC2012 val images'):
        ImageNetReaL(data_root=root)


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(DEMO_SETS), str(root), scale='tiny', log=lambda m: None) == []
    return root


def check(root):
    return subprocess.run([sys.executable, 'tools/make_demo_data.py', '--check', str(root), '--workers', '1',
                           '--datasets', 'imagenet_v2', 'imagenet_real'], cwd=REPO, capture_output=True, text=True)


def test_demo_copies_pass_check_and_a_broken_one_fails_clearly(demo, tmp_path):
    assert check(demo).returncode == 0, check(demo).stdout
    broken = tmp_path / 'demo'
    shutil.copytree(demo, broken)
    real_json = broken / 'imagenet_real' / 'real.json'
    entries = json.loads(real_json.read_text())
    real_json.write_text(json.dumps(entries[:-1]))  # one entry short
    v2 = broken / 'imagenet_v2' / 'imagenetv2-matched-frequency-format-val'
    os.rename(v2 / '3', v2 / 'n01491361')  # a synset name where the class index belongs
    result = check(broken)
    assert result.returncode == 1
    assert "FAIL  imagenet_v2" in result.stdout and "['n01491361'] are not class indices" in result.stdout
    assert 'FAIL  imagenet_real' in result.stdout and f'real.json has {len(entries) - 1} entries' in result.stdout


def run_tool(*args):
    result = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


@pytest.mark.usefixtures('checkpoint_policy')
def test_demo_training_records_v2_and_real_and_test_py_evaluates_v2(demo, tmp_path):
    v2 = demo / 'imagenet_v2' / 'imagenetv2-matched-frequency-format-val'
    loaders = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={demo / "imagenet"}', 'num_workers=0', 'persistent_workers=False')]
    run_tool('tools/train.py', 'configs/demo/deit3_sup_demo.py', '--work-dir', str(tmp_path), '--cfg-options',
             *loaders, 'train_dataloader.batch_size=8', 'val_dataloader.batch_size=10', 'train_cfg.max_epochs=1',
             'train_cfg.val_interval=1', f'val_cfg.extra_sets.0.dataset.data_root={v2}',
             f'val_cfg.extra_sets.1.dataset.data_root={demo / "imagenet_real"}')
    metrics = json.loads((tmp_path / 'result.json').read_text())['metrics']
    assert {'top1', 'top1_v2', 'top5_v2', 'top1_real'} <= metrics.keys()
    # evaluating the trained checkpoint on V2 alone: a config whose test set is V2
    config = tmp_path / 'v2_test.py'
    config.write_text(f"_base_ = ['{REPO}/configs/demo/deit3_sup_demo.py']\n"
                      "test_dataloader = dict(num_workers=0, persistent_workers=False, dataset=dict(_delete_=True,\n"
                      f"    type='ImageNetV2', data_root='{v2}', pipeline={{{{_base_.test_pipeline}}}}))\n"
                      "test_evaluator = dict(suffix='_v2')\n")
    run_tool('tools/test.py', str(config), str(tmp_path / 'epoch_1.pth'), '--work-dir', str(tmp_path / 'test'))
    tested = json.loads((tmp_path / 'test' / 'eval' / 'epoch_1' / 'result.json').read_text())['metrics']
    assert tested['top1_v2'] == pytest.approx(metrics['top1_v2'])
