"""The shared run contracts: result.json after every evaluating run (its seed and cost included), and
--backbone/--checkpoint swaps."""
import json

import pytest
import torch
from mmengine.config import Config

from _tool_helpers import CONFIG, RESULT_SCHEMA_KEYS, run_tool, train
from backbones import create_model, save_checkpoint
from downstream.backbone_swap import swap_backbone
from harness.experiment.result_record import normalize_metrics
from vitbench.engine.checkpoint_policy import install_checkpoint_policy

EXPERIMENT = ['experiment.task=pretrain', 'experiment.dataset=toy', 'experiment.backbone=vit_demo_patch8_64']
TOY_IMAGES = 4 * 4  # the toy config's 4 iterations of batches of 4


def test_training_run_with_an_experiment_writes_result_json(tmp_path, monkeypatch):
    monkeypatch.setenv('OMP_NUM_THREADS', '1')  # the thread count the record must report
    train(tmp_path, '--cfg-options', *EXPERIMENT, 'randomness.seed=7')
    record = json.loads((tmp_path / 'result.json').read_text())
    assert set(record) == RESULT_SCHEMA_KEYS
    assert (record['task'], record['dataset'], record['backbone']) == ('pretrain', 'toy', 'vit_demo_patch8_64')
    assert record['pretrain'] == dict(recipe='scratch', epochs=0, checkpoint=None)
    assert record['metrics']['loss'] > 0 and record['params_M'] > 0
    assert 0 < record['gflops'] < 0.5  # counted at the demo variant's 64x64, not at 224 (3.5 GFLOPs)
    assert record['config'].endswith('toy_config.py') and record['created'].startswith('20')
    assert record['seed'] == 7  # --cfg-options randomness.seed, as mmengine used it
    cost = record['cost']
    assert cost['device'] == dict(kind='cpu', name=cost['device']['name'], count=1, threads=1)  # OMP_NUM_THREADS=1
    assert cost['device']['name'] and cost['wall_s'] > 0 and cost['peak_mem_MB'] > 10
    assert cost['device_hours'] == pytest.approx(cost['wall_s'] / 3600)
    assert cost['images_per_s'] == pytest.approx(TOY_IMAGES / cost['wall_s'])
    assert cost['pretrain_device_hours'] is None and cost['total_device_hours'] == cost['device_hours']


@pytest.fixture(scope='module')
def downstream_run(tmp_path_factory):
    """Two of the toy config's four iterations, from a backbone.pth whose pre-training cost 2.5 device-hours."""
    root = tmp_path_factory.mktemp('downstream')
    weights = save_checkpoint(str(root / 'backbone.pth'), create_model('vit_demo_patch8_64', num_classes=0),
                              meta=dict(pretrain=dict(recipe='mae', epochs=3), device_hours=2.5))
    options = [*EXPERIMENT[1:], 'experiment.task=finetune', f'experiment.checkpoint={weights}']
    train(root / 'run', '--cfg-options', *options, 'train_cfg.max_iters=2')
    return root / 'run', options


def test_a_run_from_a_backbone_reports_the_device_hours_behind_it(downstream_run):
    work_dir, _ = downstream_run
    record = json.loads((work_dir / 'result.json').read_text())
    assert record['pretrain'] == dict(recipe='mae', epochs=3, checkpoint=str(work_dir.parent / 'backbone.pth'))
    assert record['seed'] == 0  # the toy config's randomness.seed
    cost = record['cost']
    assert cost['pretrain_device_hours'] == 2.5
    assert cost['total_device_hours'] == pytest.approx(cost['device_hours'] + 2.5)
    assert cost['images_per_s'] == pytest.approx(TOY_IMAGES / 2 / cost['wall_s'])


def test_a_resumed_run_costs_all_its_processes(downstream_run, tmp_path):
    """The runner checkpoint carries the cost so far; the run that resumes from it goes on counting."""
    work_dir, options = downstream_run
    install_checkpoint_policy()  # runner checkpoints load with weights_only, as in every entry point
    before = torch.load(work_dir / 'iter_2.pth')['meta']['vitbench_cost']
    assert before['images'] == TOY_IMAGES / 2 and before['wall_s'] > 0
    train(tmp_path, '--resume', work_dir / 'iter_2.pth', '--cfg-options', *options)
    cost = json.loads((tmp_path / 'result.json').read_text())['cost']
    assert cost['wall_s'] > before['wall_s']
    assert cost['images_per_s'] == pytest.approx(TOY_IMAGES / cost['wall_s'])  # both halves' images
    assert cost['device_hours'] == pytest.approx(cost['wall_s'] / 3600)


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


def test_the_record_says_its_resolution_and_the_variants_own():
    """What the leaderboard tells a ↑384 fine-tune apart by (vitbench/results/table.py finetune_res)."""
    from harness.experiment.result_record import resolutions
    assert resolutions('deit3_base_patch16_224', dict(img_size=384)) == dict(img_size=384, variant_img_size=224)
    assert resolutions('cait_m36_384', {}) == dict(img_size=384, variant_img_size=384)
    assert resolutions('deit3_huge_patch14_224', dict(img_size=[378, 378])) == dict(img_size=378,
                                                                                     variant_img_size=224)
    assert resolutions('vit_demo_patch8_64', dict(img_size=(48, 32))) == dict(img_size=[48, 32], variant_img_size=64)
