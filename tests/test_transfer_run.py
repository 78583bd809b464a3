"""Transfer configs build what they say: attention-only trains exactly the attention layers (+ pos_embed and
the new head), a linear probe only the head, ``--backbone`` swaps keep the head at the dataset's classes, the
head / dataset mismatch is caught, and the demo configs run end to end and write result.json with the mode."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper

import downstream  # noqa: F401  (registers the datasets, transforms and hook)
from backbones import create_model, save_checkpoint
from downstream.backbone_swap import swap_backbone
from downstream.transfer import TransferCheckHook
from downstream.transfer.inat import OFFICIAL as INAT_OFFICIAL
from harness import demo_data
from harness.experiment.cli import build_runner
import pretrain  # noqa: F401
from vitbench.registry import DATASETS, MODELS

REPO = Path(__file__).resolve().parents[1]

# both: a second assignment used to drop the policy, so the checkpoint test passed only after another module's
pytestmark = [pytest.mark.usefixtures('checkpoint_policy'),  # the tests torch.load runner checkpoints
              pytest.mark.usefixtures('vitbench_scope')]


def config(name, backbone=None):
    cfg = Config.fromfile(str(REPO / 'configs' / name))
    if backbone is not None:
        swap_backbone(cfg, backbone)
    cfg.model.backbone.init_cfg = None  # the configs point at pre-training outputs; the structure is what counts
    return cfg


def trainable(model):
    return {n for n, p in model.named_parameters() if p.requires_grad}


def test_attention_only_trains_attention_pos_embed_and_head():
    cfg = config('transfer/flowers102_deit3_s_attn.py')
    model = MODELS.build(cfg.model)
    names = trainable(model)
    expected = {f'backbone.blocks.{i}.attn.{layer}.{p}' for i in range(12) for layer in ('qkv', 'proj')
                for p in ('weight', 'bias')} | {'backbone.pos_embed', 'backbone.head.weight', 'backbone.head.bias'}
    assert names == expected
    assert model.backbone.head.out_features == 102
    frozen = {n for n, _ in model.named_parameters()} - names
    for part in ('patch_embed.proj.weight', 'cls_token', 'blocks.0.norm1.weight', 'blocks.0.mlp.fc1.weight',
                 'blocks.11.ls1.gamma', 'norm.weight'):
        assert f'backbone.{part}' in frozen
    # the optimizer (layer-decay constructor of the recipe) holds exactly the trained parameters
    wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    in_optimizer = {n for group in wrapper.optimizer.param_groups for n in group['param_names']}
    assert in_optimizer == expected


def test_linear_probe_trains_the_head_only():
    model = MODELS.build(config('transfer/cifar100_vit_tiny12h_mae_linear.py', 'vit_demo_patch8_64').model)
    assert trainable(model) == {'backbone.head.weight', 'backbone.head.bias'}
    assert model.probe_norm is not None and model.backbone.global_pool == 'avg'


@pytest.mark.parametrize('name,backbone,family', [
    ('transfer/cars_deit3_s.py', 'cait_xxs24_224', 'CaiT'),
    ('transfer/pets_vit_tiny12h_mae.py', 'deit_tiny_patch16_224', 'VisionTransformer')])
def test_backbone_swap_keeps_the_dataset_head(name, backbone, family):
    cfg = config(name, backbone)
    model = MODELS.build(cfg.model)
    assert type(model.backbone).__name__ == family and model.arch == backbone
    assert model.backbone.head.out_features == cfg.model.num_classes
    assert cfg.experiment.backbone == backbone and cfg.experiment.task == 'transfer'


CONFIGS = sorted(os.path.relpath(p, REPO / 'configs') for p in glob.glob(str(REPO / 'configs/transfer/*.py')))


@pytest.mark.parametrize('name', CONFIGS)
def test_every_config_pairs_its_dataset_and_head(name):
    cfg = Config.fromfile(str(REPO / 'configs' / name))
    train = cfg.train_dataloader.dataset
    official = INAT_OFFICIAL[train.year] if train.type == 'INaturalist' else DATASETS.get(train.type).OFFICIAL
    assert cfg.model.num_classes == cfg.model.data_preprocessor.num_classes == official['classes']
    assert cfg.val_dataloader.dataset == cfg.test_dataloader.dataset
    assert cfg.val_dataloader.dataset.split != cfg.train_dataloader.dataset.split
    assert cfg.experiment.task == 'transfer' and cfg.experiment.backbone == cfg.model.backbone.arch
    assert os.path.basename(name).startswith(cfg.experiment.dataset + '_')  # files are named <dataset>_...


def fake_runner(trainable_mode, num_outputs, dataset, experiment):
    backbone = SimpleNamespace(num_classes=num_outputs)
    loader = SimpleNamespace(dataset=dataset)
    return SimpleNamespace(model=SimpleNamespace(trainable=trainable_mode, backbone=backbone),
                           cfg=Config(dict(experiment=experiment)), train_dataloader=loader, val_dataloader=loader)


def test_check_hook_records_the_mode_and_rejects_a_wrong_head():
    dataset = SimpleNamespace(metainfo=dict(classes=tuple('abcdefghij')), data_root='data/demo/stanford_cars')
    runner = fake_runner('attention', 10, dataset, dict(task='transfer', eval='full'))
    hook = TransferCheckHook()
    hook.before_run(runner)
    hook.before_train(runner)
    assert runner.cfg.experiment.eval == 'attention'

    runner = fake_runner('all', 196, dataset, dict(task='transfer'))
    with pytest.raises(ValueError, match=r'196 outputs .* has 10 classes: set model.num_classes=10'):
        hook.before_val(runner)


# ---------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['cifar10', 'flowers102']), str(root), scale='tiny',
                              log=lambda m: None) == []
    return root


@pytest.mark.slow
def test_demo_run_from_a_checkpoint_writes_result_json_with_the_mode(tiny, tmp_path):
    """tools/train.py on the CIFAR-10 demo, a few iterations on the tiny data, attention-only, starting from a
    backbone.pth trained at 64x64 with a 1000-class head: the head is re-initialised at 10 classes, the
    position embedding resized to 32x32, and result.json records where the weights came from."""
    checkpoint = save_checkpoint(str(tmp_path / 'backbone.pth'), create_model('vit_demo_patch8_64'),
                                 meta=dict(pretrain=dict(recipe='supervised', epochs=8)))
    root = tiny / 'cifar10'
    work_dir = tmp_path / 'run'
    result = subprocess.run(
        [sys.executable, 'tools/train.py', 'configs/demo/transfer_cifar10_demo.py', '--work-dir', str(work_dir),
         '--checkpoint', checkpoint, '--cfg-options', f'train_dataloader.dataset.data_root={root}',
         f'val_dataloader.dataset.data_root={root}', f'test_dataloader.dataset.data_root={root}',
         'train_cfg.max_epochs=2', 'train_cfg.val_interval=2', 'train_dataloader.batch_size=8',  # 6 iterations an epoch
         'model.trainable=attention'],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((work_dir / 'result.json').read_text())
    assert (record['task'], record['dataset'], record['backbone'], record['eval']) == \
        ('transfer', 'cifar10', 'vit_demo_patch8_64', 'attention')
    assert record['pretrain'] == dict(recipe='supervised', epochs=8, checkpoint=checkpoint)
    assert record['backbone_overrides'] == dict(img_size=32, global_pool='avg')
    assert set(record['metrics']) >= {'top1', 'top5'} and 0 <= record['metrics']['top1'] <= 100
    assert record['metrics']['top5'] >= record['metrics']['top1']
    assert not (work_dir / 'backbone.pth').exists()  # transfer runs leave no backbone export
    state = torch.load(work_dir / 'epoch_2.pth')['state_dict']
    assert state['backbone.head.weight'].shape == (10, 192) and state['backbone.pos_embed'].shape == (1, 17, 192)
    before = torch.load(checkpoint)['state_dict']
    assert torch.equal(state['backbone.blocks.0.mlp.fc1.weight'], before['blocks.0.mlp.fc1.weight'])  # frozen
    assert not torch.equal(state['backbone.blocks.0.attn.qkv.weight'], before['blocks.0.attn.qkv.weight'])


@pytest.mark.slow
def test_flowers_demo_runs_in_process_from_scratch(tiny, tmp_path):
    """The MAE-lite recipe (SGD, layer decay, global pooling) on the file-based Flowers-102 layout."""
    cfg = Config.fromfile(str(REPO / 'configs/demo/transfer_flowers102_demo.py'))
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[loader].dataset.data_root = str(tiny / 'flowers102')
        cfg[loader].num_workers = 0
        cfg[loader].persistent_workers = False
    cfg.train_cfg.max_epochs = cfg.train_cfg.val_interval = 2  # 1 warm-up epoch, then cosine
    cfg.work_dir = str(tmp_path)
    build_runner(cfg).train()
    record = json.loads((tmp_path / 'result.json').read_text())
    assert (record['dataset'], record['eval']) == ('flowers102', 'full') and 'top1' in record['metrics']
    assert record['pretrain']['recipe'] == 'scratch'
