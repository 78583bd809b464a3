"""The one demo-scale run of the DeiT chapter's mechanisms: a distilled demo ViT trained through tools/train.py with
a timm RegNetY teacher loaded from a file the test writes (--teacher), its per_image.npz holding each image's
predicted classes; evaluated again with the class head alone (tools/test.py), and the two runs' disagreement read by
tools/analyze.py, whose ground-truth column is one minus the top-1 each run recorded."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import timm
import torch

from harness import demo_data

pytestmark = pytest.mark.usefixtures('checkpoint_policy')

REPO = Path(__file__).resolve().parents[1]
CONFIG = 'configs/demo/deit_distilled_demo.py'


def _run(*args):
    result = subprocess.run([sys.executable, *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def test_distillation_from_a_timm_teacher_file_leaves_predictions_and_their_disagreement(tmp_path, capsys):
    assert demo_data.generate(demo_data.select(['imagenet']), str(tmp_path), scale='tiny', log=lambda m: None) == []
    torch.manual_seed(0)
    teacher = tmp_path / 'regnety_002.pth'
    torch.save({'model': timm.create_model('regnety_002', num_classes=25).state_dict()}, teacher)  # DeiT's layout
    loaders = ('train_dataloader', 'val_dataloader', 'test_dataloader')
    options = [f'{loader}.{key}' for loader in loaders for key in (
        f'dataset.data_root={tmp_path}/imagenet', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=20', 'test_dataloader.batch_size=20',
                'train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1',
                'default_hooks.logger.interval=1']
    train_dir = tmp_path / 'train'
    log = _run('tools/train.py', CONFIG, '--work-dir', train_dir, '--teacher', teacher, '--cfg-options', *options)
    assert 'loss_dist' in log
    record = json.loads((train_dir / 'result.json').read_text())
    assert record['pretrain']['recipe'] == 'supervised_distilled'
    with np.load(train_dir / 'per_image.npz') as npz:
        pred, label, correct = npz['top1/pred'], npz['top1/label'], npz['top1/correct']
        assert npz['top1/topk'].shape == (len(pred), 5) and (npz['top1/topk'][:, 0] == pred).all()
    assert len(pred) == 40 and ((pred == label) == correct).all()

    class_dir = tmp_path / 'class_head'
    _run('tools/test.py', CONFIG, train_dir / 'epoch_1.pth', '--work-dir', class_dir, '--cfg-options',
         f'model.distillation.teacher.checkpoint={teacher}', 'model.distill_inference=class_head', *options)
    class_eval = class_dir / 'eval' / 'epoch_1'  # tools/test.py's own record (docs/reliability.md)
    out = tmp_path / 'analysis'
    spec = importlib.util.spec_from_file_location('analyze_tool', REPO / 'tools' / 'analyze.py')
    analyze = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(analyze)  # in this process: one interpreter start less
    assert analyze.main(['disagreement', '--runs', f'joint={train_dir}', f'class={class_eval}', '--out', str(out)]) == 0
    table = capsys.readouterr().out
    result = json.loads((out / 'disagreement.json').read_text())
    assert result['models'] == ['groundtruth', 'joint', 'class'] and 'groundtruth' in table
    top1 = record['metrics']['top1']
    assert result['pairs']['groundtruth|joint']['disagreement'] == pytest.approx(1 - top1 / 100)
    class_top1 = json.loads((class_eval / 'result.json').read_text())['metrics']['top1']
    assert result['pairs']['groundtruth|class']['disagreement'] == pytest.approx(1 - class_top1 / 100)
    assert 0 <= result['pairs']['joint|class']['disagreement'] <= 1 and result['pairs']['joint|class']['images'] == 40
