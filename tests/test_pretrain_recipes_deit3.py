"""DeiT III recipes (configs/pretrain/deit3_*.py, configs/finetune/deit3_*.py) and the ImageNet-21k reader.

Every DeiT III config trains two iterations on the tiny demo data through mmengine's Runner, with the demo backbone
swapped in (as ``--backbone``) and every resolution scaled by 1/8 (so 192 px pre-training -> 224 fine-tuning ->
384 fine-tuning stays a resolution change), each fine-tune starting from the backbone.pth of the pre-training the
official commands start it from: ImageNet-1k 800 epochs -> 224 / 384, ImageNet-21k -> ImageNet-1k. The
ImageNet-21k reader labels a folder by its line in the class list, and names the file or folder it cannot use.
"""
import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import timm
import torch
from mmengine.config import Config
from _backbone_helpers import materialize

import pretrain  # noqa: F401  (registers the recipes' components)
from backbones import create_model
from backbones.complexity import count_flops, count_params
from harness import demo_data
from harness.demo_data import imagenet, imagenet21k
from harness.experiment.cli import build_runner, load_config
from pretrain.imagenet21k import CLASS_LIST, ImageNet21k

pytestmark = pytest.mark.usefixtures('checkpoint_policy')

REPO = Path(__file__).resolve().parents[1]
DEMO = 'vit_demo_patch8_64'  # patch 8: the configs' sizes are scaled by 1/8 to multiples of 8 (demo_size)
V2_ROOT = 'imagenet_v2/imagenetv2-matched-frequency-format-val'

# config -> the config whose backbone.pth it starts from (None: from scratch), as README_revenge.md chains them
CHAIN = {
    **{f'pretrain/deit3_{s}_in1k_400e': None for s in ('tiny', 'small', 'medium', 'base', 'large', 'huge')},
    **{f'pretrain/deit3_{s}_in1k_800e': None for s in ('small', 'base', 'large', 'huge')},
    **{f'finetune/deit3_{s}_in1k_ft224': f'pretrain/deit3_{s}_in1k_800e' for s in ('base', 'large', 'huge')},
    **{f'finetune/deit3_{s}_full_ft384': f'pretrain/deit3_{s}_in1k_800e' for s in ('small', 'base', 'large', 'huge')},
    # no longer ViT-T / ViT-M pre-training is published: their 384 fine-tunes start from the 400-epoch models
    **{f'finetune/deit3_{s}_full_ft384': f'pretrain/deit3_{s}_in1k_400e' for s in ('tiny', 'medium')},
    **{f'finetune/deit3_base_{m}_ft384': 'pretrain/deit3_base_in1k_800e' for m in ('attn', 'ffn')},
    **{f'pretrain/deit3_{s}_in21k_240e': None for s in ('small', 'base', 'large')},
    'pretrain/deit3_huge_in21k_90e': None,
    **{f'pretrain/deit3_{s}_in21k_90e': None for s in ('base', 'large')},  # the thesis' default, Table 6.12's †
    **{f'finetune/deit3_{s}_in21k_90e_ft_in1k': f'pretrain/deit3_{s}_in21k_90e' for s in ('base', 'large')},
    # Table 6.12's † @384 / @320: the same 21k model fine-tuned on 1k at the row's resolution
    'finetune/deit3_base_in21k_90e_ft_in1k_384': 'pretrain/deit3_base_in21k_90e',
    'finetune/deit3_large_in21k_90e_ft_in1k_320': 'pretrain/deit3_large_in21k_90e',
    **{f'finetune/deit3_{s}_in21k_ft_in1k': f'pretrain/deit3_{s}_in21k_240e' for s in ('small', 'base', 'large')},
    'finetune/deit3_huge_in21k_ft_in1k': 'pretrain/deit3_huge_in21k_90e',
}
# configs that are another one with only its backbone changed: with the demo backbone swapped in they would train
# the same run again, so they are checked to be that config but for the backbone (and built on the meta device)
BACKBONE_OF = {
    # Table 6.6's 1B-parameter ViT-H-52 / ViT-H-26x2: the ViT-H recipes, 400 epochs then 20 at 224
    **{f'pretrain/deit3_huge{v}_in1k_400e': 'pretrain/deit3_huge_in1k_400e' for v in ('52', '26x2')},
    **{f'finetune/deit3_huge{v}_in1k_ft224': 'finetune/deit3_huge_in1k_ft224' for v in ('52', '26x2')},
}


def test_every_deit3_config_is_exercised():
    """A new DeiT III config joins CHAIN (with its start), so it is trained below."""
    found = {str(p.relative_to(REPO / 'configs'))[:-3] for d in ('pretrain', 'finetune')
             for p in (REPO / 'configs' / d).glob('deit3_*.py')}
    assert found <= set(CHAIN) | set(BACKBONE_OF), sorted(found - set(CHAIN) - set(BACKBONE_OF))


@pytest.mark.parametrize('name', sorted(BACKBONE_OF))
def test_backbone_only_configs_are_their_recipe_with_that_backbone(name):
    """The config is its recipe's (BACKBONE_OF) with only model.backbone.arch, experiment.backbone and the path of
    the weights a fine-tune starts from changed; its model builds (on the meta device: no 4 GB of weights)."""
    def settings(config):
        cfg = Config.fromfile(str(REPO / 'configs' / f'{config}.py')).to_dict()
        arch = cfg['model']['backbone'].pop('arch')
        assert cfg['experiment'].pop('backbone') == arch
        for node in (cfg, cfg['model']['backbone'].get('init_cfg') or {}):
            node.pop('checkpoint', None)
        return arch, cfg
    arch, mine = settings(name)
    base_arch, base = settings(BACKBONE_OF[name])
    assert arch != base_arch and mine == base
    from mmengine.registry import MODELS, DefaultScope
    with DefaultScope.overwrite_default_scope('vitbench'), torch.device('meta'):
        model = MODELS.build(Config.fromfile(str(REPO / 'configs' / f'{name}.py')).model)
    with torch.device('meta'):
        variant = create_model(arch)
    assert len(model.backbone.blocks) == len(variant.blocks) and count_params(model.backbone) == count_params(variant)


# ------------------------------------------------------------------------------------------------ ViT-T
def test_deit3_tiny_variant_is_table_6_14_vit_t_and_timm_deit3_at_tiny_width():
    """Thesis Table 6.14: ViT-T 5.7M parameters, 1.3 GFLOPs; timm's DeiT III at DeiT-Ti width (timm has no
    deit3_tiny): the same tensors (tests/test_backbones_models.py checks the logits)."""
    ours = materialize(create_model, 'deit3_tiny_patch16_224')
    ref = materialize(timm.create_model, 'deit3_small_patch16_224', pretrained=False, embed_dim=192, num_heads=3)
    assert round(count_params(ours) / 1e6, 1) == 5.7
    assert round(count_flops(ours) / 1e9, 1) == 1.3
    assert {k: v.shape for k, v in ours.state_dict().items()} == {k: v.shape for k, v in ref.state_dict().items()}
    assert ours.blocks[0].attn.num_heads == 3 and ours.pos_embed.shape == (1, 196, 192)  # patches only, as DeiT III


# ------------------------------------------------------------------------------------------------ data
@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    names = ['imagenet', 'imagenet_v2', 'imagenet_real', 'imagenet21k']
    assert demo_data.generate(demo_data.select(names), str(root), scale='tiny', log=lambda m: None) == []
    return root


def samples(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


def test_imagenet21k_labels_are_class_list_lines_not_sorted_folders(demo):
    root = demo / 'imagenet21k'
    listed = (root / CLASS_LIST).read_text().split()
    assert listed == list(imagenet21k.WNIDS) and listed != sorted(listed)
    for split, per_class in (('imagenet21k_train', 3), ('imagenet21k_val', 1)):
        dataset = ImageNet21k(data_root=str(root), split=split, num_classes=len(listed))
        got = [(Path(s['img_path']).parent.name, s['gt_label']) for s in samples(dataset)]
        assert len(got) == per_class * len(listed)
        assert all(label == listed.index(wnid) for wnid, label in got)
        assert sum(label != sorted(listed).index(wnid) for wnid, label in got) >= per_class * (len(listed) - 1)
        assert dataset.metainfo['classes'] == tuple(listed)


def test_imagenet21k_errors_name_the_class_list_and_the_folder(demo, tmp_path):
    root = tmp_path / 'in21k'
    shutil.copytree(demo / 'imagenet21k', root)
    (root / CLASS_LIST).rename(root / 'classes.txt')
    with pytest.raises(FileNotFoundError, match=rf'^ImageNet-21k class list {root / CLASS_LIST} not found: expected '
                       r'one WordNet id per line in label order \(winter 2021: .*10,450 lines\); set class_list=.*$'):
        ImageNet21k(data_root=str(root))
    assert len(ImageNet21k(data_root=str(root), class_list='classes.txt')) == 36
    with pytest.raises(ValueError, match=r'classes\.txt: 12 classes, but num_classes is 10450'):
        ImageNet21k(data_root=str(root), class_list='classes.txt', num_classes=10450)
    shutil.copytree(root / 'imagenet21k_train' / 'n04229737', root / 'imagenet21k_train' / 'n09999999')
    with pytest.raises(FileNotFoundError, match=r"^ImageNet-21k .*imagenet21k_train: folder 'n09999999' is not in the "
                       r'class list .*classes\.txt \(1 such folders; expected only its 12 WordNet ids\)$'):
        ImageNet21k(data_root=str(root), class_list='classes.txt')


def test_make_demo_data_check_fails_a_broken_imagenet21k(demo, tmp_path):
    assert demo_data.check(demo_data.select(['imagenet21k']), str(demo)) == {'imagenet21k': []}
    shutil.copytree(demo / 'imagenet21k', tmp_path / 'imagenet21k')
    shutil.rmtree(tmp_path / 'imagenet21k' / 'imagenet21k_val' / imagenet21k.WNIDS[5])
    result = subprocess.run([sys.executable, 'tools/make_demo_data.py', '--check', str(tmp_path), '--datasets',
                             'imagenet21k', '--workers', '1'], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert ('FAIL  imagenet21k' in result.stdout and
            f"imagenet21k/imagenet21k_val/: ImageNet-21k {tmp_path}/imagenet21k/imagenet21k_val: no folder for class "
            f"'{imagenet21k.WNIDS[5]}'" in result.stdout), result.stdout


# ------------------------------------------------------------------------------------------------ recipes
def demo_size(size: int) -> int:
    return 8 * max(2, round(size / 64))  # 126 / 154 -> 16, 192 -> 24, 224 -> 32, 384 -> 48: a grid of 2 to 6 patches


def shrink(node):
    """Every image size of a config (crops, RandAugment, the backbone, its recorded overrides) scaled by 1/8."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ('size', 'img_size') and isinstance(value, int) and value > 64:
                node[key] = demo_size(value)
            else:
                shrink(value)
    elif isinstance(node, list):
        for item in node:
            shrink(item)


def train(name, work_dir, demo, checkpoint=None):
    """One epoch of ``name`` on 16 demo images (two batches of 8, no workers), as tools/train.py --backbone DEMO runs
    it."""
    in21k = 'in21k_' in name and name.startswith('pretrain/')
    root = demo / ('imagenet21k' if in21k else 'imagenet')
    classes = len(imagenet21k.WNIDS if in21k else imagenet.WNIDS)
    options = {f'{loader}.{key}': value for loader in ('train_dataloader', 'val_dataloader') for key, value in (
        ('dataset.data_root', str(root)), ('dataset.indices', 16), ('dataset.serialize_data', False),
        ('num_workers', 0), ('persistent_workers', False), ('batch_size', 8))}
    options.update({'model.num_classes': classes, 'model.data_preprocessor.num_classes': classes,
                    'train_cfg.max_epochs': 1, 'train_cfg.val_interval': 1, 'param_scheduler.0.end': 1,
                    'param_scheduler.1.begin': 1, 'default_hooks.checkpoint.interval': 1})
    if in21k:
        options.update({f'{loader}.dataset.num_classes': classes for loader in ('train_dataloader', 'val_dataloader')})
    else:
        for i, extra in enumerate((V2_ROOT, 'imagenet_real')):
            options.update({f'val_cfg.extra_sets.{i}.dataset.data_root': str(demo / extra),
                            f'val_cfg.extra_sets.{i}.dataset.serialize_data': False})
    size = (Config.fromfile(str(REPO / 'configs' / f'{name}.py')).model.get('backbone') or {}).get('img_size')
    if isinstance(size, int) and size % 8:  # ViT-H's 154 / 126 (patch 14): the demo's patch 8 must divide it at load
        options['model.backbone.img_size'] = size - size % 8  # then scaled by shrink() as every size
    args = argparse.Namespace(config=str(REPO / 'configs' / f'{name}.py'), work_dir=str(work_dir), cfg_options=options,
                              backbone=DEMO, backbone_checkpoint=checkpoint, launcher='none', local_rank=0)
    cfg = load_config(args)
    cfg.model.backbone.setdefault('img_size', 224)  # the config's resolution, not the demo variant's 64
    for key in list(cfg.keys()):
        shrink(cfg[key])
    build_runner(cfg).train()
    return json.loads((work_dir / 'result.json').read_text()), cfg


@pytest.fixture(scope='module')
def runs(demo, tmp_path_factory):
    """name -> (result.json, config, work dir), each config trained once, its start trained first."""
    done = {}

    def run(name):
        if name not in done:
            start = CHAIN[name]
            checkpoint = str(run(start)[2] / 'backbone.pth') if start else None
            work_dir = tmp_path_factory.mktemp(name.replace('/', '_'))
            done[name] = (*train(name, work_dir, demo, checkpoint), work_dir)
        return done[name]
    return run


def exported(work_dir):
    return torch.load(work_dir / 'backbone.pth', weights_only=True)


@pytest.mark.parametrize('name', sorted(CHAIN))
def test_config_trains_on_demo_data_from_its_start(name, runs):
    record, cfg, work_dir = runs(name)
    assert record['backbone'] == DEMO and record['task'] == ('pretrain' if name.startswith('pretrain/') else 'finetune')
    assert 0 <= record['metrics']['top1'] <= 100
    if 'in21k_' in name and name.startswith('pretrain/'):
        assert record['dataset'] == 'imagenet21k' and 'top1_v2' not in record['metrics']
    else:  # ImageNet-1k runs end with ImageNet-V2 and ReaL
        assert record['dataset'] == 'imagenet' and {'top1_v2', 'top1_real'} <= record['metrics'].keys()
    size = cfg.model.backbone.img_size
    assert cfg.train_dataloader.dataset.pipeline[1].size == size  # trained at the (scaled) resolution it records
    assert exported(work_dir)['state_dict']['pos_embed'].shape == create_model(DEMO, img_size=size).pos_embed.shape
    start = CHAIN[name]
    if start:  # loaded its start's weights (bicubically resized position embeddings), then barely moved them:
        before = exported(runs(start)[2])['state_dict']  # the first epoch is warm-up from lr / 10 or less
        after = exported(work_dir)['state_dict']
        torch.testing.assert_close(after['patch_embed.proj.weight'], before['patch_embed.proj.weight'],
                                   atol=1e-4, rtol=0)
        assert record['pretrain']['checkpoint'] == str(runs(start)[2] / 'backbone.pth')


@pytest.mark.parametrize('name, official, ours', [('deit3_huge_in1k_800e', 160, 154), ('deit3_huge_in21k_90e', 128, 126)])
def test_vit_h_low_resolution_recipes_train_at_the_tokens_the_official_stem_sees(name, official, ours):
    """The official commands say --input-size 160 / 128; the 14-pixel stem floors them to 11 x 11 / 9 x 9 tokens,
    the 154 / 126 px the thesis names. The decision is the config's header's."""
    path = REPO / 'configs/pretrain' / f'{name}.py'
    cfg = Config.fromfile(str(path))
    assert cfg.model.backbone.img_size == ours == (official // 14) * 14
    header = ' '.join(line.lstrip('# ') for line in path.read_text().splitlines() if line.startswith('#'))
    assert f'Decision, {ours} rather than {official}' in header
