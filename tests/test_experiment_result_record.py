"""The shared run contracts: result.json after every evaluating run, and --backbone/--checkpoint swaps."""
import json

import pytest
from mmengine.config import Config

from _tool_helpers import CONFIG, RESULT_SCHEMA_KEYS, run_tool
from downstream.backbone_swap import swap_backbone
from vitbench.experiment.result_record import normalize_metrics


def test_training_run_with_an_experiment_writes_result_json(tmp_path):
    result = run_tool('tools/train.py', CONFIG, '--work-dir', tmp_path, '--cfg-options',
                      'experiment.task=pretrain', 'experiment.dataset=toy',
                      'experiment.backbone=vit_demo_patch8_64')
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / 'result.json').read_text())
    assert set(record) == RESULT_SCHEMA_KEYS
    assert (record['task'], record['dataset'], record['backbone']) == ('pretrain', 'toy', 'vit_demo_patch8_64')
    assert record['pretrain'] == dict(recipe='scratch', epochs=0, checkpoint=None)
    assert record['metrics']['loss'] > 0 and record['params_M'] > 0
    assert 0 < record['gflops'] < 0.5  # counted at the demo variant's 64x64, not at 224 (3.5 GFLOPs)
    assert record['config'].endswith('toy_config.py') and record['created'].startswith('20')


def test_metrics_are_normalized_to_the_papers_names_and_percent():
    import numpy as np
    assert normalize_metrics({'coco/bbox_mAP': 0.407, 'accuracy/top1': 81.2, 'mIoU': np.float32(49.25),
                              'table': 'x'}) == pytest.approx({'bbox_mAP': 40.7, 'top1': 81.2, 'mIoU': 49.25})


def _seg_like_config(backbone_type='vitbench.VisionTransformer', arch='deit3_base_patch16_224'):
    return Config(dict(model=dict(type='EncoderDecoder', backbone=dict(type=backbone_type, arch=arch)),
                       experiment=dict(task='none', dataset='ade20k', backbone=arch)))


def test_swap_backbone_rewrites_arch_family_and_checkpoint(tmp_path):
    cfg = _seg_like_config()
    swap_backbone(cfg, 'cait_xxs24_224')
    assert cfg.model.backbone.type == 'vitbench.CaiT' and cfg.model.backbone.arch == 'cait_xxs24_224'
    assert cfg.experiment.backbone == 'cait_xxs24_224'
    weights = tmp_path / 'backbone.pth'
    weights.write_bytes(b'')
    swap_backbone(cfg, checkpoint=str(weights))
    assert cfg.model.backbone.init_cfg == dict(type='Pretrained', checkpoint=str(weights))
    assert cfg.experiment.checkpoint == str(weights) and cfg.experiment.pretrain is None


def test_unknown_backbone_is_exit_2_with_the_valid_names():
    result = run_tool('tools/train.py', CONFIG, '--backbone', 'deit3_smal_patch16_224')
    assert result.returncode == 2
    assert 'unknown backbone' in result.stderr and 'deit3_small_patch16_224' in result.stderr


def test_missing_backbone_checkpoint_is_exit_2():
    result = run_tool('tools/train.py', CONFIG, '--checkpoint', 'nowhere/backbone.pth')
    assert result.returncode == 2 and 'nowhere/backbone.pth' in result.stderr
