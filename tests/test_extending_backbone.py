"""A backbone family is one record (backbones/family.py) that every consumer asks, over a model class that meets the
family contract (backbones/contract.py), and a new one goes in the way docs/extending-backbone.md says:
tests/toy_fixtures/toy_family.py (its model, dense backbone, record and variant, no edit to any suite file) is swapped
into every task's demo config; the guide itself is followed as written, its Python blocks taken from the page into
one module, whose family passes the contract checks and, end to end, is trained by tools/train.py ``--backbone`` on
the tiny demo data of supervised pre-training, UperNet, Mask R-CNN, transfer and MAE, then tabulated by
tools/leaderboard.py."""
import argparse
import csv
import dataclasses
import importlib
import io
import json
import os
import re
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config

import downstream  # noqa: F401  (registers the seg / det glue)
from _contract_checks import check_dense_tasks, check_family, check_on_meta, check_runs
from _tool_helpers import FIXTURES, run_tool
from backbones import FAMILIES, create_model, family_of, get_family, list_models, register_family
from backbones.checkpoint import load_checkpoint
from backbones.family import UPERNET_LEVELS, UPERNET_WIDTHS, CheckpointFormat
from backbones.variants import VARIANTS
from downstream.backbone_swap import swap_backbone
from downstream.seg.swap import LEVELS, WIDTHS
from harness import demo_data
from vitbench.registry import MODELS

REPO = Path(__file__).resolve().parents[1]
TOY = 'toypool_tiny_patch8_64'
GUIDE = REPO / 'docs' / 'extending-backbone.md'


@pytest.fixture(scope='module', autouse=True)
def toy_family():
    """The toy family registered for this module's tests only, as custom_imports does in a run: the test modules that
    loop over every family or variant see the suite's own, whatever the order pytest collects and runs them in."""
    sys.path.insert(0, str(FIXTURES))  # as run_tool's PYTHONPATH does for a run
    assert 'toy_family' not in sys.modules, 'toy_family was imported before: its registration cannot be undone'
    importlib.import_module('toy_family')
    yield
    FAMILIES.pop('toypool')
    VARIANTS.pop(TOY)
    sys.path.remove(str(FIXTURES))


def _swapped(config: str, name: str = TOY) -> Config:
    cfg = Config.fromfile(REPO / 'configs/demo' / config)
    swap_backbone(cfg, name)
    return cfg


@pytest.fixture
def toy_record(monkeypatch):
    """Replace the toy's record for one test: ``toy_record(**changes)``."""
    def replace(**changes):
        monkeypatch.setitem(FAMILIES, 'toypool', dataclasses.replace(FAMILIES['toypool'], **changes))
    return replace


# ---------------------------------------------------------------------------------------------- the records
def test_every_family_names_its_registered_dense_backbone_and_every_variant_a_family():
    # the package's modules that register a family are those of the registered records: found, not listed
    files = (REPO / 'backbones').glob('*.py')
    registering = {f'backbones.{p.stem}' for p in files if re.search(r'^register_family\(', p.read_text(), re.M)}
    modules = {(record.model_class or record.describe_maps).__module__ for record in FAMILIES.values()}
    assert registering and registering == {module for module in modules if module.startswith('backbones.')}
    assert 'toy_family' in modules
    for record in FAMILIES.values():
        dense = MODELS.get(record.dense_type)
        assert dense is not None, record.name
        assert getattr(dense, 'family', 'timm') == record.name  # the dense class says which record it belongs to
    assert all(VARIANTS[name]['model'] in FAMILIES for name in list_models())
    assert sorted(n for f in FAMILIES.values() for n in f.variants) == list_models()
    assert get_family('patchconvnet').variants[:2] == ('patchconvnet_b120', 'patchconvnet_b60')
    assert FAMILIES['toypool'].variants == (TOY,) and family_of(TOY) == 'toypool'


def test_each_upernet_rule_a_record_can_name_is_a_rule_of_the_seg_swap():
    assert set(LEVELS) == set(UPERNET_LEVELS) and set(WIDTHS) == set(UPERNET_WIDTHS)


def test_a_family_registers_once_with_free_variant_names_and_known_rules(monkeypatch):
    monkeypatch.setattr('backbones.family.FAMILIES', dict(FAMILIES))
    toy = FAMILIES['toypool']
    with pytest.raises(ValueError, match=r"register_family\('toypool'\): a family of that name is registered"):
        register_family(toy)
    with pytest.raises(ValueError, match=r"variant name\(s\) \['resmlp_12'\] are taken"):
        register_family(dataclasses.replace(toy, name='other'), variants={'resmlp_12': dict(paper='', kwargs={})})
    with pytest.raises(ValueError, match=r"upernet_levels='spread'.*expected one of \('pyramid', 'trunk_output'\)"):
        register_family(dataclasses.replace(toy, name='other', upernet_levels='spread'))
    with pytest.raises(TypeError, match=r"Module lacks forward\(\), forward_features\(\), .*get_layer_id\(\), .*num_lay"):
        register_family(dataclasses.replace(toy, name='other', model_class=torch.nn.Module))


def test_the_package_imports_its_family_modules_so_a_family_file_is_found_without_a_list(tmp_path, monkeypatch):
    """backbones/__init__.py: ``discover_families`` imports every module of a package, its private ones aside."""
    package = tmp_path / 'famspkg'
    package.mkdir()
    (package / '__init__.py').write_text('from backbones.family import discover_families\n'
                                         'discover_families(__name__, __path__)\n')
    (package / '_private.py').write_text("raise ImportError('a private module is not imported')\n")
    (package / 'zeta.py').write_text((FIXTURES / 'toy_family.py').read_text().replace("'toypool", "'zetapool")
                                     .replace("name='ToyPoolNet'", "name='ZetaPoolNet'"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr('backbones.family.FAMILIES', dict(FAMILIES))
    monkeypatch.setattr('backbones.family.VARIANTS', dict(VARIANTS))
    from backbones import family
    importlib.import_module('famspkg')
    assert family.FAMILIES['zetapool'].variants == ('zetapool_tiny_patch8_64',)
    assert 'famspkg._private' not in sys.modules
    for module in ('famspkg', 'famspkg.zeta'):
        sys.modules.pop(module)


def test_an_unregistered_family_is_one_line_naming_the_registered_ones(monkeypatch):
    """A variant whose family's module was never imported: one line from every consumer, no bare KeyError."""
    monkeypatch.setitem(VARIANTS, 'ghost_tiny', dict(model='ghost', paper='', kwargs={}))
    expected = (re.escape(f"unknown backbone family 'ghost': registered families are {', '.join(sorted(FAMILIES))} ")
                + '.*register_family')
    with pytest.raises(KeyError, match=expected):
        create_model('ghost_tiny')
    cfg = Config.fromfile(REPO / 'configs/demo/upernet_demo.py')
    with pytest.raises(KeyError, match=expected) as error:
        swap_backbone(cfg, 'ghost_tiny')
    assert '\n' not in error.value.args[0]


# ---------------------------------------------------------------------------------------------- the consumers
def test_the_swap_writes_the_records_dense_type_and_upernet_layout():
    seg = _swapped('upernet_demo.py')
    backbone = seg.model.backbone
    assert (backbone.type, backbone.arch, seg.experiment.backbone) == ('vitbench.ToyPoolNet', TOY, TOY)
    assert backbone.out_indices == [1, 2, 3, 5] and backbone.img_size == 128  # depth 6: four blocks spread
    assert seg.model.neck.embed_dim == 32 and seg.model.decode_head.in_channels == [32] * 4
    assert seg.model.decode_head.channels == 64 and seg.model.auxiliary_head.in_channels == 32  # the demo's rule


def test_the_upernet_layout_follows_the_record(toy_record):
    toy_record(upernet_levels='trunk_output', fixed_grid=True)
    seg = _swapped('upernet_demo.py')
    assert seg.model.backbone.out_indices == [5] * 4 and seg.model.backbone.img_size == (128, 128)  # the crops


def test_mask_rcnn_drops_the_windows_of_a_family_without_them_and_keeps_them_when_the_record_says_so(toy_record):
    det = _swapped('maskrcnn_demo.py')
    backbone = det.model.backbone
    assert backbone.type == 'vitbench.ToyPoolNet' and backbone.out_indices == [5]
    assert not {'window_size', 'global_attn_indexes', 'use_rel_pos'} & set(backbone)
    assert det.model.neck.in_channels == 32 and det.model.neck.scales == [2.0, 1.0, 0.5, 0.25]
    toy_record(windowed=True, fixed_grid=True)
    det = _swapped('maskrcnn_demo.py')
    assert det.model.backbone.global_attn_indexes == [0, 2, 3, 5] and det.model.backbone.window_size == 8
    assert det.model.backbone.img_size == 128  # the padded batch


def test_a_records_checkpoint_format_is_read_by_the_loader(toy_record, tmp_path):
    """The toy's 'official' files name the blocks 'stages': its record's format renames them."""
    def rename(sd):
        return {k.replace('stages.', 'blocks.', 1): v for k, v in sd.items()}
    toy_record(checkpoint_formats=(CheckpointFormat('toy official', lambda sd: 'stages.0.norm1.weight' in sd, rename),))
    torch.manual_seed(0)
    source = create_model(TOY)
    torch.save({k.replace('blocks.', 'stages.', 1): v for k, v in source.state_dict().items()}, tmp_path / 'toy.pth')
    model = create_model(TOY)
    report = load_checkpoint(model, str(tmp_path / 'toy.pth'), verbose=False)
    assert report.source == 'toy official'
    assert all(torch.equal(v, source.state_dict()[k]) for k, v in model.state_dict().items())


def test_the_classifier_and_the_dense_backbone_of_the_toy_family():
    classifier = create_model(TOY, num_classes=10, img_size=32)
    assert classifier(torch.randn(2, 3, 32, 32)).shape == (2, 10)
    dense = MODELS.build(dict(type='ToyPoolNet', arch=TOY, out_indices=[1, 5]))
    maps = dense(torch.randn(1, 3, 64, 48))
    assert [m.shape for m in maps] == [(1, 32, 8, 6)] * 2
    assert dense.num_layers == 6 and dense.get_layer_id('backbone.blocks.2.mlp.fc1.weight') == 3
    with pytest.raises(ValueError, match=r"arch 'resmlp_12' is not a ToyPoolNet variant"):
        MODELS.build(dict(type='ToyPoolNet', arch='resmlp_12'))


def test_custom_imports_on_the_command_line_are_imported_before_the_swap(tmp_path):
    """--cfg-options custom_imports.imports=[...] (mmengine imports only a config's own, when it parses it)."""
    from harness.experiment.cli import ConfigError, load_config
    base = dict(config='configs/demo/upernet_demo.py', backbone=TOY, backbone_checkpoint=None, keep_blocks=None,
                work_dir=str(tmp_path), launcher='none', local_rank=0, resume=None)
    cfg = load_config(argparse.Namespace(**base, cfg_options={'custom_imports.imports': ['toy_family']}))
    assert cfg.model.backbone.type == 'vitbench.ToyPoolNet'
    expected = r"^--cfg-options custom_imports: \['no_such_family'\]: ImportError: Failed to import no_such_family"
    with pytest.raises(ConfigError, match=expected):
        load_config(argparse.Namespace(**base, cfg_options={'custom_imports.imports': ['no_such_family']}))
    # a module whose registration refuses (a family record with an unknown UperNet rule) is one line too
    (tmp_path / 'bad_family.py').write_text(
        'from backbones.family import Family, register_family\n'
        'from backbones.vit import VisionTransformer\n'
        "register_family(Family(name='bad', title='Bad', model_class=VisionTransformer, dense_type='X', "
        "upernet_levels='spread'))\n")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ConfigError, match=r"^--cfg-options custom_imports: \['bad_family'\]: ValueError: "
                                              r"register_family\('bad'\): upernet_levels='spread'"):
            load_config(argparse.Namespace(**base, cfg_options={'custom_imports.imports': ['bad_family']}))
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(ConfigError, match=r'^--cfg-options custom_imports: expected custom_imports.imports='):
        load_config(argparse.Namespace(**dict(base, config='configs/demo/sup_demo.py'),  # no custom_imports of its own
                                       cfg_options={'custom_imports.allow_failed_imports': False}))


# ---------------------------------------------------------------------------------------------- the guide
@pytest.fixture(scope='module')
def guide(tmp_path_factory):
    """docs/extending-backbone.md followed as written: its Python blocks, in order, as one module on sys.path, named as
    its command line imports it; the module, its folder and its variant (the guide's ``--backbone``)."""
    text = GUIDE.read_text()
    module = re.search(r'custom_imports\.imports=\[(\w+)\]', text).group(1)
    variant = re.search(r'--backbone (\S+)', text).group(1)
    folder = tmp_path_factory.mktemp('guide')
    (folder / f'{module}.py').write_text('\n\n'.join(re.findall(r'^```python\n(.*?)^```', text, re.S | re.M)))
    sys.path.insert(0, str(folder))
    importlib.import_module(module)
    yield module, folder, variant
    FAMILIES.pop(VARIANTS.pop(variant)['model'])
    sys.modules.pop(module)
    sys.path.remove(str(folder))


def test_the_guides_family_passes_the_contract_checks(guide, tmp_path):
    """What tests/test_backbone_contract.py checks of every registered family, on the guide's: MAE and MoCo-v3 included
    (a class token, global attention, a position table)."""
    _, _, variant = guide
    check_family(family_of(variant))
    check_on_meta(variant)
    check_runs(variant, tmp_path)
    check_dense_tasks(variant)
    assert {'class_token', 'keep', 'pos_embed_table', 'attention'} == create_model(variant).capabilities


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    datasets = demo_data.select(['imagenet', 'ade20k', 'coco', 'cifar10'])
    assert demo_data.generate(datasets, str(root), seed=0, scale='tiny', workers=1, log=lambda m: None) == []
    return root


def _loaders(root, loaders=('train_dataloader', 'val_dataloader'), **extra):
    options = [f'{loader}.{key}={value}' for loader in loaders
               for key, value in dict(num_workers=0, persistent_workers=False, **extra).items()]
    return options + [f'{loader}.dataset.data_root={root}' for loader in loaders]


def _runs(tiny):
    """config -> its options for one or two iterations on the tiny demo data."""
    seg, coco = tiny / 'ade20k' / 'ADEChallengeData2016', tiny / 'coco'
    three = ('train_dataloader', 'val_dataloader', 'test_dataloader')
    # 2 iterations an epoch: a warm-up of one epoch that rounds to one iteration is refused (tools/train.py's lr curve)
    imagenet = _loaders(tiny / 'imagenet', batch_size=4, **{'dataset.indices': 8})
    return {
        'sup_demo.py': [*imagenet, 'train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'val_cfg.extra_sets=[]'],
        'upernet_demo.py': [*_loaders(seg, three), 'train_dataloader.batch_size=2', 'val_dataloader.dataset.indices=2',
                            'test_dataloader.dataset.indices=2', 'train_cfg.max_iters=2', 'train_cfg.val_interval=2',
                            'param_scheduler.0.end=1', 'param_scheduler.1.begin=1',
                            'param_scheduler.1.end=2'],  # with the config's layer decay: the family's get_layer_id
        'maskrcnn_demo.py': [*_loaders(coco), 'train_dataloader.batch_size=2', 'val_dataloader.batch_size=3',
                             f'val_evaluator.ann_file={coco}/annotations/instances_val2017.json',
                             'train_cfg.max_iters=2', 'train_cfg.val_interval=2', 'param_scheduler.0.end=1',
                             'param_scheduler.1.end=2',
                             'param_scheduler.1.milestones=[1]', 'model.test_cfg.rcnn.score_thr=0.0',
                             'model.test_cfg.rcnn.max_per_img=10'],
        'transfer_cifar10_demo.py': [*_loaders(tiny / 'cifar10', three), 'train_dataloader.batch_size=8',
                                     'train_dataloader.dataset.indices=32', 'train_cfg.max_epochs=1',
                                     'train_cfg.val_interval=1'],
        'mae_demo.py': [*imagenet, 'train_cfg.max_epochs=1', 'train_cfg.val_interval=1'],
    }


@pytest.fixture(scope='module')
def guide_runs(guide, tiny, tmp_path_factory):
    """tools/train.py CONFIG --backbone <the guide's variant>, its module imported by --cfg-options as the guide says,
    on every task's demo config: config -> result.json; and the folder of the runs."""
    module, folder, variant = guide
    root, records = tmp_path_factory.mktemp('runs'), {}
    with pytest.MonkeyPatch.context() as env:  # the module on the runs' PYTHONPATH, as the guide says
        env.setenv('PYTHONPATH', os.pathsep.join([str(folder), os.environ.get('PYTHONPATH', '')]))
        for config, options in _runs(tiny).items():
            work_dir = root / Path(config).stem
            result = run_tool('tools/train.py', f'configs/demo/{config}', '--work-dir', work_dir, '--backbone', variant,
                              '--cfg-options', f'custom_imports.imports=[{module}]', 'default_hooks.checkpoint=None',
                              *options, timeout=600)
            assert result.returncode == 0, config + result.stdout[-2000:] + result.stderr[-3000:]
            records[config] = json.loads((work_dir / 'result.json').read_text())
    return records, root


@pytest.mark.slow
@pytest.mark.filterwarnings('ignore:__array__ implementation:DeprecationWarning')
def test_the_guides_family_trains_on_every_task(guide, guide_runs):
    records, root = guide_runs
    assert {config: record['backbone'] for config, record in records.items()} == dict.fromkeys(records, guide[2])
    assert all(record['params_M'] > 0 for record in records.values())
    assert 0 <= records['sup_demo.py']['metrics']['top1'] <= 100 and (root / 'sup_demo' / 'backbone.pth').exists()
    assert records['upernet_demo.py']['task'] == 'seg' and 'mIoU' in records['upernet_demo.py']['metrics']
    assert {'bbox_mAP', 'segm_mAP'} <= set(records['maskrcnn_demo.py']['metrics'])
    assert records['transfer_cifar10_demo.py']['task'] == 'transfer'
    assert records['mae_demo.py']['pretrain']['recipe'] == 'mae' and (root / 'mae_demo' / 'backbone.pth').exists()


@pytest.mark.slow
def test_the_leaderboard_tabulates_the_guides_family(guide, guide_runs):
    _, root = guide_runs
    result = run_tool('tools/leaderboard.py', root, '--format', 'csv', '--no-paper')
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {row['pretraining']: row for row in csv.DictReader(io.StringIO(result.stdout)) if row['backbone'] == guide[2]}
    assert set(rows) == {'supervised', 'mae', 'scratch'}, result.stdout  # the three dense / transfer runs: scratch
    downstream = [column for column in rows['scratch'] if column.startswith(('ADE20k', 'COCO', 'CIFAR-10'))]
    assert rows['scratch']['runs'] == '3' and {c.split()[0] for c in downstream if rows['scratch'][c]} >= {
        'ADE20k-demo', 'COCO-demo', 'CIFAR-10'}
