"""The DeiT III ablation switches (thesis Tables 6.2-6.4, 6.15; docs/recipes.md): each config key changes what is
built (the transform objects, the criterion, the blocks), read from the built objects; each chapter-6 row of the map
resolves to the recipe its columns name (the recipe audit's reading of the config); one demo training runs with the
switches."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config
from PIL import Image
from timm.data.auto_augment import AutoAugment as TimmAutoAugment, RandAugment as TimmRandAugment
from timm.data.transforms import RandomResizedCropAndInterpolation
from torchvision import transforms as T

from pretrain import transforms as vt
from pretrain.recipe_audit import hyperparameters
from vitbench.registry import TRANSFORMS
from vitbench.results.paper_map import load_map, row_runs

REPO = Path(__file__).resolve().parents[1]
BASE = 'configs/pretrain/deit3_base_in1k_400e.py'
P = 'train_dataloader.dataset.pipeline'
CROP, FLIP, POLICY, COLOUR = 1, 2, 3, 4  # the positions docs/recipes.md and the map's rows use


def config(path=BASE, **options):
    cfg = Config.fromfile(str(REPO / path))
    cfg.merge_from_dict(options)
    return cfg


def train_steps(cfg):
    return [TRANSFORMS.build(dict(step)) for step in cfg.train_dataloader.dataset.pipeline]


def image(seed=0, size=(72, 60)):
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8))


def test_the_deit3_pipelines_keep_the_positions_the_switches_use():
    for path in (BASE, 'configs/pretrain/deit3_small_in1k_400e.py', 'configs/pretrain/deit3_base_in21k_90e.py',
                 'configs/demo/deit3_sup_demo.py'):
        types = [step['type'] for step in config(path).train_dataloader.dataset.pipeline]
        assert types[CROP] == 'TrainCrop' and types[FLIP] == 'RandomHorizontalFlip', path
        assert types[POLICY] == 'ThreeAugment' and types[COLOUR] == 'ColorJitter', path


def test_crop_switch_builds_rrc_or_simple_random_crop():
    rrc = train_steps(config())[CROP]
    src = train_steps(config(**{f'{P}.{CROP}.kind': 'src'}))[CROP]
    assert isinstance(rrc.transform, RandomResizedCropAndInterpolation) and rrc.transform.scale == (0.08, 1.0)
    crop = src.transform.transforms[1]  # resize the short side, then a reflect-padded random crop
    assert isinstance(crop, T.RandomCrop) and crop.padding == 4 and crop.padding_mode == 'reflect'
    assert src({'img': image()})['img'].size == (224, 224)
    with pytest.raises(ValueError, match="TrainCrop: kind must be one of rrc, src"):
        vt.TrainCrop(224, kind='ccrop')


def test_flip_and_colour_jitter_switches():
    steps = train_steps(config(**{f'{P}.{FLIP}.prob': 0.0, f'{P}.{COLOUR}.strength': 0.0}))
    assert steps[FLIP].transform.p == 0.0
    img = image()
    assert steps[FLIP]({'img': img})['img'] is img  # never flipped
    jitter = steps[COLOUR].transform
    assert jitter.brightness is None and jitter.contrast is None and jitter.saturation is None
    default = train_steps(config())[COLOUR].transform
    assert default.brightness == (0.7, 1.3)


def test_three_augment_ops_keep_a_subset():
    img = image()
    none = train_steps(config(**{f'{P}.{POLICY}.ops': []}))[POLICY]
    assert none.ops == () and none({'img': img})['img'] is img  # colour jitter and flip alone (Table 6.2 row 1)
    gray = train_steps(config(**{f'{P}.{POLICY}.ops': ['grayscale']}))[POLICY]
    out = np.asarray(gray({'img': img})['img'])
    assert (out[..., 0] == out[..., 1]).all() and (out[..., 1] == out[..., 2]).all()  # grayscale every image
    full = train_steps(config())[POLICY]
    assert full.ops == ('grayscale', 'solarization', 'gaussian_blur') and len(full.transform.transforms) == 3
    with pytest.raises(ValueError, match='ThreeAugment: ops must be a list of grayscale, solarization, gaussian_blur'):
        vt.ThreeAugment(['grayscale', 'blur'])


@pytest.mark.parametrize('policy, options, built', [
    ('rand_augment', {'type': 'RandAugment', 'config_str': 'rand-m9-mstd0.5-inc1'}, TimmRandAugment),
    ('auto_augment', {'type': 'AutoAugment', 'config_str': 'original'}, TimmAutoAugment),
    ('trivial_augment', {'type': 'TrivialAugment'}, T.TrivialAugmentWide),
])
def test_policy_switch_builds_the_policy_and_the_audit_reads_it(policy, options, built):
    cfg = config(**{f'{P}.{POLICY}.{k}': v for k, v in options.items()})
    step = train_steps(cfg)[POLICY]
    assert isinstance(step.transform, built)
    assert step({'img': image()})['img'].size == (60, 72)
    values = hyperparameters(cfg)
    assert values['augment_policy'] == policy and values['three_augment'] is False
    assert values['three_augment_ops'] is None


def test_the_audit_reads_the_switches():
    values = hyperparameters(config(**{f'{P}.{CROP}.kind': 'src', f'{P}.{FLIP}.prob': 0.0,
                                       f'{P}.{POLICY}.ops': ['grayscale']}))
    assert values['train_crop'] == 'SimpleRandomCrop' and values['crop_scale'] is None
    assert values['hflip'] is False and values['three_augment_ops'] == ['grayscale'] and values['three_augment']
    values = hyperparameters(config(**{f'{P}.{POLICY}.ops': []}))
    assert values['three_augment'] is False and values['augment_policy'] == 'three_augment'


def test_loss_and_layerscale_switches_change_the_built_model(vitbench_scope):
    from vitbench.registry import MODELS
    options = {'model.loss.kind': 'ce', 'model.backbone.init_values': None}
    with torch.device('meta'):
        switched = MODELS.build(config('configs/pretrain/deit3_small_in1k_400e.py', **options).model)
        default = MODELS.build(config('configs/pretrain/deit3_small_in1k_400e.py').model)
    assert switched.loss_module.kind == 'ce' and default.loss_module.kind == 'bce'
    assert switched.backbone.blocks[0].ls1 is None  # no LayerScale (backbones/layers/blocks.py)
    assert default.backbone.blocks[0].ls1.gamma.shape == (384,)


# ------------------------------------------------------------------------------------- the map's chapter-6 rows

DROP_PATH_400 = {'S': 0.0, 'B': 0.1, 'L': 0.4, 'H': 0.5}  # thesis Table 6.14
DROP_PATH_800 = {'S': 0.05, 'B': 0.2, 'L': 0.45}  # README_revenge.md's 800-epoch commands


def chapter6_rows(number):
    table = next(t for t in load_map() if t.key == f'thesis:{number}')
    return [(row, run) for row in table.rows for run in row_runs(row)]


def resolved(run):
    cfg = config(run.config, **run.cfg_options)
    return cfg, hyperparameters(cfg)


def test_table_6_2_rows_are_the_3_augment_subsets_and_colour_jitter_they_name():
    expected = [(['grayscale'] * 0, 0.3), (['grayscale'], 0.3), (['grayscale', 'gaussian_blur'], 0.3),
                (['grayscale', 'solarization', 'gaussian_blur'], 0.3), (['grayscale', 'solarization', 'gaussian_blur'],
                                                                         0.0)]
    rows = chapter6_rows('6.2')
    assert len(rows) == len(expected)
    for (row, run), (ops, jitter) in zip(rows, expected):
        _, values = resolved(run)
        assert (values['three_augment_ops'], values['color_jitter']) == (ops, jitter), row['note']
        assert values['variant'] == 'deit3_base_patch16_224' and values['epochs'] == 400


@pytest.mark.parametrize('number', ['6.3', '6.4', '6.15'])
def test_rows_resolve_to_the_policy_loss_layerscale_and_epochs_they_name(number):
    policies = {'AutoAugment': 'auto_augment', 'RandAugment': 'rand_augment', 'TrivialAugment': 'trivial_augment',
                '3-Augment': 'three_augment'}
    for row, run in chapter6_rows(number):
        cfg, values = resolved(run)
        where = f"{number} {row['model']} {row.get('note', '')} {row['epochs']}"
        assert values['epochs'] == row['epochs'] == cfg.experiment.pretrain.epochs, where
        assert cfg.param_scheduler[-1]['end'] == row['epochs'], where  # the cosine ends with the run
        if number == '6.3':
            assert values['augment_policy'] == policies[row['note']], where
            assert values['color_jitter'] == (0.3 if row['note'] == '3-Augment' else 0.0), where
            assert (run.backbone == 'timm:resnet50') == (row['model'] == 'ResNet-50'), where
        if number == '6.4':
            loss, ls, aug = row['note'].split(', ')
            assert values['loss'] == loss.lower(), where
            assert (values['layer_scale'] == 1e-4) == (ls == 'LayerScale'), where
            assert values['augment_policy'] == policies[aug], where
        if number == '6.15':  # §6.4: past 400 epochs, weight decay 0.05 and more drop path (Table 6.14 at 400;
            size = row['model'][-1]  # 600: +0.05; 800: the official 800-epoch commands')
            drop_path = {300: DROP_PATH_400, 400: DROP_PATH_400, 600: {k: v + 0.05 for k, v in DROP_PATH_400.items()},
                         800: DROP_PATH_800}[row['epochs']][size]
            assert values['drop_path'] == pytest.approx(drop_path), where
            assert values['weight_decay'] == (0.05 if row['epochs'] > 400 else 0.02), where
            assert cfg.experiment.backbone_overrides.drop_path_rate == pytest.approx(values['drop_path']), where


# ------------------------------------------------------------------------------------- one demo training

@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    from harness import demo_data
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def test_demo_training_runs_with_the_switches(data_root, tmp_path):
    """The DeiT III demo recipe, one epoch on 40 images, with Simple Random Crop, AutoAugment in place of
    3-Augment, no colour jitter, cross-entropy and no LayerScale: what a Table 6.3 / 6.4 row runs."""
    switches = [f'{P}.{CROP}.kind=src', f'{P}.{POLICY}.type=AutoAugment', f'{P}.{POLICY}.config_str=original',
                f'{P}.{COLOUR}.strength=0.0', 'model.loss.kind=ce', 'model.backbone.init_values=None']
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=40')]
    options += ['train_dataloader.batch_size=8', 'val_dataloader.batch_size=20', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'val_cfg.extra_sets=[]', 'default_hooks.logger.interval=1']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/deit3_sup_demo.py', '--work-dir',
                             str(tmp_path), '--cfg-options', *options, *switches], cwd=REPO, capture_output=True,
                            text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    record = json.loads((tmp_path / 'result.json').read_text())
    assert 'top1' in record['metrics'] and np.isfinite(record['metrics']['loss'])
    dumped = Config.fromfile(str(next(tmp_path.glob('*/vis_data/config.py'))))
    steps = dumped.train_dataloader.dataset.pipeline
    assert (steps[CROP]['kind'], steps[POLICY]['type'], steps[COLOUR]['strength']) == ('src', 'AutoAugment', 0.0)
    assert dumped.model.loss.kind == 'ce' and dumped.model.backbone.init_values is None


def test_table_6_5_pretrainings_are_the_21k_recipe_switched_as_its_columns_say():
    rows = chapter6_rows('6.5')
    assert len(rows) == 21
    for row, run in rows:
        crop, ls, mixup, policy, ft = row['note'].split(', ')
        pre, values = resolved(type(run)(run.needs, run.needs_options))
        where = f"6.5 {row['model']} {row['note']} {row['epochs']}"
        assert pre.experiment.dataset == 'imagenet21k' and values['epochs'] == row['epochs'], where
        assert cfg_end(pre) == row['epochs'] and values['train_crop'] == {'RRC': 'RandomResizedCrop',
                                                                           'SRC': 'SimpleRandomCrop'}[crop], where
        assert (values['layer_scale'] == 1e-4) == (ls == 'LayerScale'), where
        assert values['mixup'] == (0.8 if mixup == 'Mixup 0.8' else 0.0), where
        assert values['augment_policy'] == ('rand_augment' if policy == 'RandAugment' else 'three_augment'), where
        fine_tune, ft_values = resolved(run)
        assert ft_values['layer_scale'] == values['layer_scale'], where  # the fine-tune loads the same blocks
        assert ft_values['img_size'] == ft_values['input_size'] == ft_values['test_size'] == int(ft[-3:]), where
        assert ft_values['variant'] == values['variant'] == row['variant'], where


def test_table_6_6_pretrains_at_the_resolution_its_rows_name_then_fine_tunes_at_224():
    for row, run in chapter6_rows('6.6'):
        where = f"6.6 {row['model']} {row['note']} {row['epochs']}"
        if 'no fine-tune' in row['note']:
            assert not run.needs and resolved(run)[1]['img_size'] == 224, where
            continue
        res = int(row['note'].split()[2].rstrip(','))
        pre, values = resolved(type(run)(run.needs, run.needs_options))
        assert values['img_size'] == values['input_size'] == values['test_size'] == res, where
        assert pre.experiment.backbone_overrides.img_size == res and values['epochs'] == row['epochs'], where
        steps = train_steps(pre)
        assert steps[CROP]({'img': image(size=(300, 280))})['img'].size == (res, res), where
        fine_tune = resolved(run)[1]
        assert fine_tune['img_size'] == 224 and fine_tune['variant'] == row['variant'], where


def cfg_end(cfg):
    return cfg.param_scheduler[-1]['end']


@pytest.mark.parametrize('number', ['3.2', '3.3', '3.8', '6.2', '6.3', '6.4', '6.5', '6.6', '6.13', '6.15'])
def test_each_run_of_a_table_is_a_row_of_its_own_on_the_leaderboard(number):
    """Two runs of one table that the leaderboard would put in one row (backbone, recipe label, epochs) would be a
    conflict there: an ablation that changes neither the model nor the epochs names itself in
    experiment.pretrain.recipe ('supervised: RandAugment'); one with a pre-training, by its pre-training's."""
    from pretrain.export import pretraining_of
    from vitbench.results.record_cells import recipe_label

    def identity(cfg, backbone=''):
        experiment = cfg.experiment
        return (backbone or experiment.backbone, recipe_label(dict(experiment.pretrain, **pretraining_of(experiment))),
                experiment.pretrain.epochs)

    seen = {}
    for row, run in chapter6_rows(number):
        for options in (run.cfg_options, run.needs_options):  # as --cfg-options reads it back: no space, no comma
            label = options.get('experiment.pretrain.recipe', 'supervised')
            assert not re.search(r'[\s,\[\]()]', label), f'{number}: {label!r}'
        key = (run.config, json.dumps(run.cfg_options, sort_keys=True), run.backbone, run.needs,
               json.dumps(run.needs_options, sort_keys=True))
        if run.needs:
            pre, _ = resolved(type(run)(run.needs, run.needs_options))
            who = (*identity(pre), run.config, json.dumps(run.cfg_options, sort_keys=True))
        else:
            who = identity(resolved(run)[0], run.backbone)
        assert seen.setdefault(who, key) == key, f"{number} {row['model']} {row.get('note', '')}: {who} is another run's"
