"""The keep-first-k-blocks experiment (MAE-lite Figs. 2 and 4): loading only the first k blocks of a checkpoint
keeps exactly those bit-equal to the file and everything above them at the fresh initialisation; the option goes
from the command line (``--keep-blocks``) through the config into result.json, the leaderboard label and the plot
mode's series."""
import argparse
import json
from pathlib import Path

import pytest
import torch

import pretrain  # noqa: F401  (registers the classifier)
from backbones import create_model, save_checkpoint
from backbones.checkpoint import load_checkpoint
from downstream.analysis.keep_blocks import keep_blocks_series
from harness.experiment.cli import ConfigError, load_config
from pretrain.export import origin_of
from vitbench.registry import MODELS
from vitbench.results.table import build_table, recipe_label

REPO = Path(__file__).resolve().parents[1]
ARCH = 'vit_demo_patch8_64'  # 6 blocks


def _randomized(seed):
    torch.manual_seed(seed)
    model = create_model(ARCH, num_classes=0)
    with torch.no_grad():  # far from any initialisation: a value that survives the load is unmistakable
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=torch.Generator().manual_seed(seed + p.numel())))
    return model


@pytest.fixture(scope='module')
def checkpoint(tmp_path_factory):
    path = tmp_path_factory.mktemp('ckpt') / 'backbone.pth'
    return save_checkpoint(str(path), _randomized(123), meta=dict(pretrain=dict(recipe='mae', epochs=3)))


def _kept(name: str, k: int) -> bool:
    """Written out by hand (not through get_layer_id): the embedding and blocks 0..k-1."""
    if name.split('.')[0] in ('cls_token', 'pos_embed', 'patch_embed'):
        return True
    return name.startswith('blocks.') and int(name.split('.')[1]) < k


@pytest.mark.parametrize('k', [0, 2, 6])
def test_keep_blocks_loads_exactly_the_first_k_blocks(checkpoint, k):
    saved = torch.load(checkpoint)['state_dict']
    torch.manual_seed(0)
    model = create_model(ARCH, num_classes=0)
    fresh = {n: t.clone() for n, t in model.state_dict().items()}
    report = load_checkpoint(model, checkpoint, keep_blocks=k, verbose=False)
    state = model.state_dict()
    assert set(state) == set(saved)
    for name, value in state.items():
        if _kept(name, k) or k == 6:
            assert torch.equal(value, saved[name]), name
        else:
            assert torch.equal(value, fresh[name]), name
            assert not torch.equal(value, saved[name]), name
    if k < 6:
        assert any(f'keep_blocks={k}' in n and 'norm' in n for n in report.notes), report.notes


def test_keep_blocks_out_of_range_is_one_clear_error(checkpoint):
    model = create_model(ARCH, num_classes=0)
    with pytest.raises(ValueError, match=r'keep_blocks=7: .* from 0 to 6 \(the model has 6 blocks\)'):
        load_checkpoint(model, checkpoint, keep_blocks=7, verbose=False)


def _args(config, **kw):
    base = dict(config=str(REPO / config), cfg_options={}, backbone=None, backbone_checkpoint=None,
                keep_blocks=None, work_dir=None, launcher='none', local_rank=0, resume=None)
    return argparse.Namespace(**dict(base, **kw))


def test_keep_blocks_from_the_command_line_to_the_model_and_result_json(checkpoint, tmp_path, vitbench_scope):
    """tools/train.py --checkpoint PATH --keep-blocks 2 on the CIFAR-10 transfer demo: the config's backbone
    loads blocks 0-1 from the file and keeps blocks 2-5 as a from-scratch run of the same seed has them; the
    record names the recipe of the checkpoint and k."""
    cfg = load_config(_args('configs/demo/transfer_cifar10_demo.py', backbone_checkpoint=checkpoint,
                            keep_blocks=2, work_dir=str(tmp_path)))
    assert cfg.model.backbone.init_cfg == dict(type='Pretrained', checkpoint=checkpoint, keep_blocks=2)
    pretrain_record, _ = origin_of(cfg.experiment, cfg)
    assert pretrain_record == dict(recipe='mae', epochs=3, checkpoint=checkpoint, keep_blocks=2)
    assert recipe_label(pretrain_record) == 'mae, first 2 blocks'

    scratch = load_config(_args('configs/demo/transfer_cifar10_demo.py', work_dir=str(tmp_path)))
    models = []
    for c in (cfg, scratch):
        torch.manual_seed(0)
        model = MODELS.build(c.model)
        model.init_weights()
        models.append(model.backbone.state_dict())
    kept, fresh = models
    saved = torch.load(checkpoint)['state_dict']
    for name in ('blocks.0.attn.qkv.weight', 'blocks.1.mlp.fc2.bias', 'patch_embed.proj.weight'):
        assert torch.equal(kept[name], saved[name]), name
    for name in ('blocks.2.attn.qkv.weight', 'blocks.5.mlp.fc1.weight', 'fc_norm.weight'):  # the config pools
        assert torch.equal(kept[name], fresh[name]), name


def test_keep_blocks_needs_a_checkpoint_and_a_count_the_backbone_has(checkpoint):
    with pytest.raises(ConfigError, match='--keep-blocks 2: .*pass --checkpoint PATH'):
        load_config(_args('configs/demo/transfer_cifar10_demo.py', keep_blocks=2))
    with pytest.raises(ConfigError, match=r'--keep-blocks 9: expected a number of blocks from 0 to 6'):
        load_config(_args('configs/demo/transfer_cifar10_demo.py', keep_blocks=9, backbone_checkpoint=checkpoint))


def _record(path: Path, dataset, recipe, top1, keep=None, seed=0):
    pretrain = dict(recipe=recipe, epochs=0 if recipe == 'scratch' else 3, checkpoint=None)
    if keep is not None:
        pretrain['keep_blocks'] = keep
    path.mkdir(parents=True)
    (path / 'result.json').write_text(json.dumps(dict(
        task='transfer', dataset=dataset, backbone=ARCH, backbone_overrides={}, pretrain=pretrain,
        metrics=dict(top1=top1), eval='full', params_M=2.7, gflops=0.2, seed=seed, cost=None, config='c.py',
        git_commit=None, created='2026-01-01T00:00:00+00:00')))


def test_keep_blocks_series_and_leaderboard_rows(tmp_path):
    _record(tmp_path / 'a', 'cifar10', 'mae', 60.0, keep=0)
    _record(tmp_path / 'b', 'cifar10', 'mae', 70.0, keep=3, seed=0)
    _record(tmp_path / 'c', 'cifar10', 'mae', 74.0, keep=3, seed=1)
    _record(tmp_path / 'd', 'cifar10', 'mae', 80.0)  # the whole checkpoint: k = depth
    _record(tmp_path / 'e', 'cifar10', 'scratch', 50.0)
    _record(tmp_path / 'f', 'flowers102', 'supervised', 40.0, keep=1)
    result = keep_blocks_series([str(tmp_path)])
    cifar = result['datasets']['cifar10']
    assert cifar['depth'] == 6 and cifar['scratch'] == 50.0
    assert cifar['series'] == {'mae': {0: 60.0, 3: 72.0, 6: 80.0}}  # mean over the two seeds of k = 3
    assert result['datasets']['flowers102']['series'] == {'supervised': {1: 40.0}}
    assert list(keep_blocks_series([str(tmp_path)], datasets=['flowers102'])['datasets']) == ['flowers102']
    # the leaderboard keeps them apart: one row per k
    recipes = sorted(r.recipe for r in build_table([str(tmp_path)]).rows)
    assert recipes == ['mae', 'mae, first 0 blocks', 'mae, first 3 blocks', 'scratch', 'supervised, first 1 blocks']
    with pytest.raises(ValueError, match="'mIoU' \\(--metric\\)"):
        keep_blocks_series([str(tmp_path)], metric='mIoU')
