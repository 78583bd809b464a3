"""The recipe audit: every paper config (configs/pretrain, configs/finetune) has the hyper-parameters its papers
or official commands state, as the tables in tests/recipe_audit/*.yaml give them with their sources, so that a
drift fails here; and the audit machinery (pretrain/recipe_audit.py) reads configs and tables as it says."""
import inspect
import textwrap
from pathlib import Path

import pytest
import yaml
from mmengine.config import Config

from pretrain.recipe_audit import (CLASSIFIER_DEFAULTS, KEYS, AuditError, audit, hyperparameters, load_table,
                                   load_tables)

REPO = Path(__file__).resolve().parents[1]
TABLES = sorted((REPO / 'tests' / 'recipe_audit').glob('*.yaml'))
PAPER_CONFIGS = sorted(str(p.relative_to(REPO)) for folder in ('pretrain', 'finetune')
                       for p in (REPO / 'configs' / folder).glob('*.py'))

try:
    AUDITED, TABLE_ERROR = load_tables(TABLES), None
except AuditError as e:  # reported by test_tables_load, not as a collection error of the whole module
    AUDITED, TABLE_ERROR = {}, str(e)


def test_tables_load():
    assert TABLES, 'no audit table under tests/recipe_audit/'
    assert TABLE_ERROR is None, TABLE_ERROR


def test_every_paper_config_is_audited():
    missing = [c for c in PAPER_CONFIGS if c not in AUDITED]
    assert not missing, ('paper configs without an audit entry (add them to a table in tests/recipe_audit/, each '
                         'value with its source): ' + ', '.join(missing))


def test_audited_configs_exist():
    absent = [c for c in AUDITED if not (REPO / c).is_file()]
    assert not absent, f'audit entries for configs that do not exist: {absent}'


@pytest.mark.parametrize('config', sorted(AUDITED))
def test_config_has_the_stated_hyperparameters(config):
    problems = audit(config, AUDITED[config], repo=str(REPO))
    assert not problems, '\n'.join(problems)


@pytest.mark.parametrize('config', sorted(c for c in AUDITED if (REPO / c).is_file()))
def test_total_batch_is_whole_per_gpu_batches(config):
    """``batch`` (auto_scale_lr.base_batch_size, what the lr is for) is the per-GPU batch times the GPUs."""
    cfg = Config.fromfile(str(REPO / config))
    total, per_gpu = hyperparameters(cfg)['batch'], cfg.train_dataloader.batch_size
    assert total is not None, f'{config}: no auto_scale_lr.base_batch_size (the total batch the lr is for)'
    assert total % per_gpu == 0, f'{config}: total batch {total} is not a multiple of the per-GPU {per_gpu}'


# ---------------------------------------------------------------------------------------------- the machinery

def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_values_a_config_leaves_out_come_from_the_variant_and_the_class():
    cfg = Config.fromfile(str(REPO / 'configs/pretrain/mae_vit_base_in1k_1600e.py'))
    values = hyperparameters(cfg)
    assert values['drop_path'] == 0.0 and values['layer_scale'] is None  # VisionTransformer's defaults
    assert values['img_size'] == 224 and values['loss'] is None  # the variant's; MAE has no classification loss
    cfg = Config(dict(model=dict(type='ImageClassifier', backbone=dict(arch='cait_s24_224'))))
    values = hyperparameters(cfg)
    assert values['layer_scale'] == 1e-5 and values['loss'] == 'ce' and values['trainable'] == 'all'
    assert values['warmup_epochs'] == 0 and values['repeated_aug'] is False and values['crop_ratio'] is None


def test_classifier_defaults_are_imageclassifiers(tmp_path):
    """What the audit assumes for keys a config leaves out is what ImageClassifier does."""
    from backbones import create_model, save_checkpoint
    from pretrain.classifier import ClsLoss, ImageClassifier
    params = inspect.signature(ImageClassifier.__init__).parameters
    assert params['trainable'].default == CLASSIFIER_DEFAULTS['trainable']
    assert params['distill_inference'].default == CLASSIFIER_DEFAULTS['distill_inference']
    loss = inspect.signature(ClsLoss.__init__).parameters
    assert loss['kind'].default == CLASSIFIER_DEFAULTS['loss']
    assert loss['label_smoothing'].default == CLASSIFIER_DEFAULTS['label_smoothing']
    teacher = save_checkpoint(str(tmp_path / 'teacher.pth'), create_model('vit_demo_patch8_64', num_classes=0))
    for kind in ('hard', 'soft'):
        model = ImageClassifier(backbone=dict(arch='vit_demo_patch8_64'), num_classes=10,
                                distillation=dict(teacher=dict(checkpoint=teacher), kind=kind))
        assert model.distillation['alpha'] == CLASSIFIER_DEFAULTS['distill_alpha'][kind], kind
        assert model.distillation['tau'] == CLASSIFIER_DEFAULTS['distill_tau'], kind


def test_a_drifted_value_is_reported_with_its_source(tmp_path):
    config = write(tmp_path, 'drifted.py', f"""\
        _base_ = ['{REPO}/configs/pretrain/resmlp_24_in1k.py']
        optim_wrapper = dict(optimizer=dict(lr=4e-3))
        model = dict(backbone=dict(drop_path_rate=0.0))
        """)
    expected = {'lr': (5.0e-3, 'thesis §4.3.1'), 'drop_path': (0.1, 'Table 3.9'), 'epochs': (400, 'x'),
                'model.backbone.arch': ('resmlp_24', 'y'), 'model.no_such_key': (1, 'z')}
    problems = audit(config, expected, repo='/')
    assert len(problems) == 3, problems
    assert any('lr is 0.004, expected 0.005 (thesis §4.3.1)' in p for p in problems)
    assert any('drop_path is 0.0, expected 0.1 (Table 3.9)' in p for p in problems)
    assert any('model.no_such_key is absent' in p for p in problems)


def test_numbers_compare_as_numbers_and_types_matter(tmp_path):
    config = write(tmp_path, 'c.py', """\
        optim_wrapper = dict(optimizer=dict(type='AdamW', lr=0.003, betas=(0.9, 0.95)))
        train_cfg = dict(max_epochs=300)
        train_dataloader = dict(sampler=dict(type='RepeatAugSampler'))
        """)
    ok = {'lr': (3.0e-3, 's'), 'betas': ([0.9, 0.95], 's'), 'epochs': (300.0, 's'), 'repeated_aug': (True, 's'),
          'optimizer': ('adamw', 's')}
    assert audit(config, ok, repo='/') == []
    assert audit(config, {'repeated_aug': (1, 's')}, repo='/')  # a bool is not the number 1
    assert audit(config, {'optimizer': ('AdamW', 's')}, repo='/')  # optimizer names are lower case


@pytest.mark.parametrize('text,message', [
    ("c.py:\n  - source: s\n    lr: 3e-3\n", 'YAML reads 3e-3 as a string'),
    ("c.py:\n  - source: s\n    learning_rate: 0.1\n", "unknown key 'learning_rate'"),
    ("c.py:\n  - lr: 0.1\n", "needs 'source'"),
    ("c.py:\n  - source: s\n", 'states no value'),
    ("c.py:\n  - {source: a, lr: 0.1}\n  - {source: b, lr: 0.2}\n", "is 0.1 in 'a' but 0.2 in 'b'"),
    ("c.py: {lr: 0.1}\n", 'expected a list of groups'),
    ("- c.py\n", 'expected a mapping'),
])
def test_bad_tables_are_refused_with_the_place(tmp_path, text, message):
    path = write(tmp_path, 'bad.yaml', text)
    with pytest.raises(AuditError, match='bad.yaml') as info:
        load_table(path)
    assert message in str(info.value)


def test_one_config_in_one_table_only(tmp_path):
    a = write(tmp_path, 'a.yaml', 'c.py:\n  - {source: a, lr: 0.1}\n')
    b = write(tmp_path, 'b.yaml', 'c.py:\n  - {source: b, epochs: 3}\n')
    with pytest.raises(AuditError, match='audited in both'):
        load_tables([a, b])
    two_sources = write(tmp_path, 'c.yaml', 'c.py:\n  - {source: a, lr: 0.1}\n  - {source: b, lr: 1.0e-1}\n')
    assert load_table(two_sources) == {'c.py': {'lr': (0.1, 'a')}}  # agreeing sources: the first is cited


def test_every_key_is_documented_and_read():
    values = hyperparameters(Config(dict()))
    assert set(values) == set(KEYS)
    assert all(isinstance(doc, str) and doc for doc in KEYS.values())
    assert yaml.safe_load('lr: 3e-3')['lr'] == '3e-3'  # the trap load_table refuses
