"""The demo recipes run end to end through tools/train.py (on the tiny demo ImageNet): checkpoints, resume,
backbone.pth that create_model loads, result.json; every pretrain / finetune config builds, also after
--backbone."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope

from backbones import create_model, save_checkpoint
from downstream.backbone_swap import swap_backbone
from harness import demo_data
import pretrain  # noqa: F401
from vitbench.registry import MODELS

pytestmark = pytest.mark.usefixtures('checkpoint_policy')  # the tests torch.load runner checkpoints

REPO = Path(__file__).resolve().parents[1]
DEMO = 'vit_demo_patch8_64'


@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def train(config, work_dir, data_root, *extra, epochs=1, resume=False):
    """tools/train.py on 40 images of the tiny demo data: batches of 8 (5 iterations an epoch), no worker
    processes, a checkpoint every epoch."""
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=10', f'train_cfg.max_epochs={epochs}',
                'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1', 'default_hooks.logger.interval=1']
    args = [sys.executable, 'tools/train.py', config, '--work-dir', str(work_dir), *extra,
            '--cfg-options', *options] + (['--resume'] if resume else [])
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def load_exported(work_dir):
    record = json.loads((Path(work_dir) / 'result.json').read_text())
    model = create_model(record['backbone'], checkpoint=str(Path(work_dir) / 'backbone.pth'),
                         **record['backbone_overrides'])
    return record, model, torch.load(Path(work_dir) / 'backbone.pth')


def test_mae_demo_saves_resumes_exports_and_records(data_root, tmp_path):
    train('configs/demo/mae_demo.py', tmp_path, data_root, epochs=1)
    assert (tmp_path / 'epoch_1.pth').exists()
    log = train('configs/demo/mae_demo.py', tmp_path, data_root, epochs=2, resume=True)
    assert 'resumed epoch: 1, iter: 5' in log
    assert torch.load(tmp_path / 'epoch_2.pth')['meta']['epoch'] == 2

    record, model, exported = load_exported(tmp_path)
    assert record['task'] == 'pretrain' and record['backbone'] == DEMO
    assert record['pretrain'] == dict(recipe='mae', epochs=2, checkpoint=None)
    assert exported['meta']['pretrain'] == dict(recipe='mae', epochs=2)
    # what the weights cost travels with them: the same device-hours as the run's record (both resumed parts)
    assert exported['meta']['device_hours'] == pytest.approx(record['cost']['total_device_hours'])
    assert record['cost']['device_hours'] > 0 and record['cost']['pretrain_device_hours'] is None
    assert {'loss', 'reconstruction_mse'} <= record['metrics'].keys()
    # the exported encoder is the trained one (runner checkpoint) and loads into a classifier
    state = torch.load(tmp_path / 'epoch_2.pth')['state_dict']
    torch.testing.assert_close(model.blocks[-1].attn.qkv.weight, state['backbone.blocks.5.attn.qkv.weight'])
    assert len(glob.glob(str(tmp_path / 'vis' / 'mae_iter_*.png'))) == 2


@pytest.mark.slow
def test_supervised_then_attention_only_finetune_demo(data_root, tmp_path):
    sup = tmp_path / 'sup'
    train('configs/demo/deit3_sup_demo.py', sup, data_root)
    record, _, exported = load_exported(sup)
    assert record['pretrain'] == dict(recipe='supervised', epochs=1, checkpoint=None)
    assert {'top1', 'top5', 'loss'} <= record['metrics'].keys()

    ft = tmp_path / 'ft'
    train('configs/demo/finetune_attn_demo.py', ft, data_root, '--checkpoint', str(sup / 'backbone.pth'))
    record, model, exported = load_exported(ft)
    assert record['task'] == 'finetune' and record['backbone_overrides'] == {}
    assert record['pretrain'] == dict(recipe='supervised', epochs=1, checkpoint=str(sup / 'backbone.pth'))
    assert exported['meta']['pretrain']['finetune'] == dict(mode='attention', epochs=1, dataset='imagenet',
                                                           img_size=[64, 64])
    before = torch.load(sup / 'backbone.pth')['state_dict']
    after = exported['state_dict']
    assert torch.equal(before['blocks.0.mlp.fc1.weight'], after['blocks.0.mlp.fc1.weight'])  # frozen
    assert not torch.equal(before['blocks.0.attn.qkv.weight'], after['blocks.0.attn.qkv.weight'])  # trained


@pytest.mark.slow
def test_distilled_mae_demo(data_root, tmp_path):
    teacher = save_checkpoint(str(tmp_path / 'teacher.pth'), create_model(DEMO, num_classes=0))
    train('configs/demo/dmae_demo.py', tmp_path / 'run', data_root, '--cfg-options',
          f'model.teacher.checkpoint={teacher}')
    record, _, _ = load_exported(tmp_path / 'run')
    assert record['pretrain']['recipe'] == 'dmae'


# ------------------------------------------------------------------------------------------------ configs
CONFIGS = sorted(glob.glob(str(REPO / 'configs' / 'pretrain' / '*.py'))) + sorted(
    glob.glob(str(REPO / 'configs' / 'finetune' / '*.py'))) + [
    str(REPO / 'configs' / 'demo' / f'{n}.py') for n in ('deit3_sup_demo', 'mae_demo', 'dmae_demo',
                                                          'finetune_attn_demo')]


@pytest.fixture(scope='module')
def demo_teacher(tmp_path_factory):
    overrides = dict(patch_size=16, img_size=224)  # the patches of the swapped-in student
    return save_checkpoint(str(tmp_path_factory.mktemp('teacher') / 'teacher.pth'),
                           create_model(DEMO, num_classes=0, **overrides), overrides=overrides)


@pytest.fixture(scope='module')
def codebook(tmp_path_factory):
    """A k-means tokenizer file of the vocabulary and seed BEiT's configs name (8192, seed 0), random centroids of
    8x8 patches: what tools/beit_tokenizer.py writes, without the fit."""
    from pretrain.beit_tokenizer import save_codebook
    path = str(tmp_path_factory.mktemp('tokenizer') / 'kmeans_8192.pth')
    save_codebook(path, torch.randn(8192, 3 * 8 * 8, generator=torch.Generator().manual_seed(0)), 8, 0, 1)
    return path


@pytest.mark.parametrize('config', CONFIGS, ids=lambda c: os.path.relpath(c, REPO))
def test_config_builds_and_swaps_backbone(config, demo_teacher, codebook):
    """Every config is complete, and `--backbone NAME` rewrites it into a model of that backbone."""
    cfg = Config.fromfile(config)
    assert cfg.experiment['task'] in ('pretrain', 'finetune')
    assert cfg.model.backbone.arch == cfg.experiment['backbone']
    for key in ('train_dataloader', 'val_dataloader', 'optim_wrapper', 'param_scheduler', 'train_cfg'):
        assert key in cfg, key
    swap_backbone(cfg, 'vit_tiny12h_patch16_224')
    cfg.model.backbone.pop('init_cfg', None)
    if 'teacher' in cfg.model:
        cfg.model.teacher = dict(checkpoint=demo_teacher)
    if 'distillation' in cfg.model:
        cfg.model.distillation.teacher = dict(checkpoint=demo_teacher)
    if (cfg.model.get('tokenizer') or {}).get('type') == 'KMeansTokenizer':  # BEiT's file, made first
        cfg.model.tokenizer.checkpoint = codebook
    init_default_scope('vitbench')
    model = MODELS.build(cfg.model)
    assert model.arch == 'vit_tiny12h_patch16_224' and model.backbone.embed_dim == 192
    assert cfg.experiment['backbone'] == 'vit_tiny12h_patch16_224'


def test_testing_a_checkpoint_records_its_own_epochs_and_waits_for_a_training_in_its_work_dir(data_root, tmp_path):
    """Issue 35.4: tools/test.py of a 1-epoch checkpoint with a 40-epoch config recorded epochs 40 (and the
    leaderboard put the number in the 40-epoch row); pointed at a training's work dir it overwrote that run's
    result.json while the training ran. Its record is its own (WORK_DIR/eval/<checkpoint>/, issue 46.1), which a
    second test of that checkpoint there waits for."""
    from vitbench.fileio import RUN_LOCK, FolderLock
    train('configs/demo/sup_demo.py', tmp_path / 'train', data_root)
    options = ['--cfg-options', f'test_dataloader.dataset.data_root={data_root}', 'test_dataloader.num_workers=0',
               'test_dataloader.persistent_workers=False', 'test_dataloader.dataset.indices=20',
               'test_dataloader.batch_size=10']
    test = [sys.executable, 'tools/test.py', 'configs/demo/sup_demo.py', str(tmp_path / 'train' / 'epoch_1.pth')]
    result = subprocess.run([*test, '--work-dir', str(tmp_path / 'test'), *options], cwd=REPO, capture_output=True,
                            text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / 'test' / 'eval' / 'epoch_1' / 'result.json').read_text())
    assert record['pretrain']['epochs'] == 1 and Config.fromfile('configs/demo/sup_demo.py').train_cfg.max_epochs == 25
    lock = FolderLock(str(tmp_path / 'busy' / 'eval' / 'epoch_1'), RUN_LOCK)  # as a test running there holds it
    lock.acquire()
    try:
        busy = subprocess.run([*test, '--work-dir', str(tmp_path / 'busy'), *options], cwd=REPO, capture_output=True,
                              text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    finally:
        lock.release()
    assert busy.returncode == 2 and 'error: a run works here: ' in busy.stderr and 'Traceback' not in busy.stderr
    assert not (tmp_path / 'busy' / 'eval' / 'epoch_1' / 'result.json').exists()


def test_killed_while_exporting_the_backbone_resume_gives_the_same_record(data_root, tmp_path):
    """Issue 35.1: killed while writing backbone.pth (after the last checkpoint and its validation), the resumed run
    used to end with a result.json of its loss only. It validates again from the checkpoint's random states: the
    same metrics as the run that never stopped, and the same exported weights."""
    config = tmp_path / 'sup_faults.py'
    config.write_text(f"_base_ = [{str(REPO / 'configs/demo/sup_demo.py')!r}]\n"
                      "custom_imports = dict(imports=['toy_faults'], allow_failed_imports=False)\n"
                      "custom_hooks = [dict(type='BackboneExportHook'), dict(type='FaultHook')]\n")
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=10', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1']
    env = dict(os.environ, OMP_NUM_THREADS='1', PYTHONPATH=os.pathsep.join(
        [str(REPO / 'tests' / 'toy_fixtures'), os.environ.get('PYTHONPATH', '')]))

    def run(work_dir, *extra, **faults):
        return subprocess.run([sys.executable, 'tools/train.py', str(config), '--work-dir', str(work_dir), *extra,
                               '--cfg-options', *options], cwd=REPO, capture_output=True, text=True, timeout=600,
                              env=dict(env, **{f'VITBENCH_FAULT_{k.upper()}': str(v) for k, v in faults.items()}))
    straight = run(tmp_path / 'straight')
    assert straight.returncode == 0, straight.stderr[-3000:]
    killed = run(tmp_path / 'run', kill_in_fsync=2)  # epoch_1.pth, then backbone.pth
    assert killed.returncode == -9 and not (tmp_path / 'run' / 'result.json').exists()
    assert not (tmp_path / 'run' / 'backbone.pth').exists()
    resumed = run(tmp_path / 'run', '--resume')
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    records = [json.loads((tmp_path / d / 'result.json').read_text()) for d in ('straight', 'run')]
    assert records[0]['metrics'] == records[1]['metrics'] and 'top1' in records[0]['metrics']
    weights = [torch.load(tmp_path / d / 'backbone.pth', weights_only=False)['state_dict'] for d in ('straight', 'run')]
    for name, value in weights[0].items():
        torch.testing.assert_close(weights[1][name], value, rtol=0, atol=0)
