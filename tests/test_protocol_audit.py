"""The protocol audit: every protocol of configs/_base_/protocols/, and every transfer recipe of
configs/_base_/transfer_*.py (through a config of configs/transfer/ derived from it), builds (on the meta device) with the values its
official sources state, as tests/protocol_audit/*.yaml gives them with their sources, read from the built
optimiser (its parameter groups: weight decay, layer id, lr scale per parameter), the built model and the config
as resolved; a drifted value fails. The machinery is harness/experiment/protocol_audit.py."""
import re
import textwrap
from pathlib import Path

import pytest

from harness.experiment.protocol_audit import AuditError, audit, build, load_table, read

REPO = Path(__file__).resolve().parents[1]
TABLES = sorted((REPO / 'tests' / 'protocol_audit').glob('*.yaml'))
PROTOCOLS = sorted(p.stem for p in (REPO / 'configs' / '_base_' / 'protocols').glob('*.py'))
RECIPES = sorted(re.search(r"name='(\w+)'", p.read_text()).group(1)
                 for p in (REPO / 'configs' / '_base_').glob('transfer_*.py') if 'protocol=dict(' in p.read_text())
AUDITED = {name: entry for path in TABLES for name, entry in load_table(str(path)).items()}


def test_every_protocol_is_audited():
    assert sorted({name.split('/')[0] for name in AUDITED}) == sorted(PROTOCOLS + RECIPES), \
        'audit every protocol of configs/_base_/protocols/ and transfer recipe in tests/protocol_audit/'
    assert RECIPES == ['transfer_deit', 'transfer_maelite'], RECIPES


@pytest.mark.parametrize('protocol', sorted(AUDITED))
def test_protocol_has_its_sources_values(protocol):
    problems = audit(AUDITED[protocol], repo=str(REPO))
    assert not problems, '\n'.join(problems)


@pytest.mark.parametrize('protocol', sorted(AUDITED))
def test_deliberate_differences_are_in_the_protocol_header(protocol):
    """A value the protocol takes against its source is also said in the protocol file's header."""
    entry = AUDITED[protocol]
    if entry['differs']:
        header = (REPO / entry['header']).read_text().split('\n_base_ = ')[0]
        assert 'Deliberate difference' in header or 'decision' in header, protocol


def test_a_drifted_value_fails(tmp_path):
    """A protocol whose weight decay, pipeline or assigner drifts from its table fails, value by value."""
    drifted = tmp_path / 'drifted.py'
    drifted.write_text(textwrap.dedent(f"""\
        _base_ = ['{REPO}/configs/_base_/protocols/maskrcnn_vitdet100e.py']
        optim_wrapper = dict(paramwise_cfg=dict(decay_biases=False))
        model = dict(train_cfg=dict(rcnn=dict(assigner=dict(match_low_quality=True))))
        """))
    entry = dict(AUDITED['maskrcnn_vitdet100e'], config=str(drifted))
    problems = audit(entry, repo='/')
    assert any('qkv.bias.weight_decay is 0.0, expected 0.1' in p for p in problems), problems
    assert any('rcnn.assigner.match_low_quality is True, expected False' in p for p in problems), problems
    assert len(problems) == 4, problems  # qkv bias, rpn conv bias, box fc bias, assigner


def test_a_drifted_transfer_recipe_fails(tmp_path):
    """Plain momentum, a colour jitter step, a lighter Mixup, a 0.875 test crop: each read from what is built."""
    drifted = tmp_path / 'drifted.py'
    drifted.write_text(textwrap.dedent(f"""\
        _base_ = ['{REPO}/configs/transfer/flowers102_deit3_s.py']
        train_dataloader = dict(dataset=dict(pipeline=[
            dict(type='LoadImageOrArray'), dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
            dict(type='RandomHorizontalFlip'), dict(type='ColorJitter', strength=0.4),
            dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=224), dict(type='PackInputs')]))
        test_dataloader = dict(dataset=dict(pipeline=[
            dict(type='LoadImageOrArray'), dict(type='ResizeCenterCrop', size=224, crop_pct=0.875),
            dict(type='PackInputs')]))
        model = dict(data_preprocessor=dict(mixup_alpha=0.2))
        """))
    problems = audit(dict(AUDITED['transfer_deit'], config=str(drifted)), repo='/')
    assert any('mixup.mixup_alpha is 0.2, expected 0.8' in p for p in problems), problems
    assert any('transforms.0.size is 256, expected 224' in p for p in problems), problems
    assert any('pipeline.train.3.transform.num_layers is absent' in p for p in problems), problems  # ColorJitter
    drifted.write_text(f"_base_ = ['{REPO}/configs/transfer/cifar100_vit_tiny12h_mae.py']\n"
                       "optim_wrapper = dict(optimizer=dict(nesterov=False), paramwise_cfg=dict(layer_decay_rate=0.65))\n")
    problems = audit(dict(AUDITED['transfer_maelite'], config=str(drifted)), repo='/')
    assert any('optimizer.nesterov is False, expected True' in p for p in problems), problems
    assert any('layer_decay is 0.65, expected 0.75' in p for p in problems), problems


def test_reading_the_built_objects():
    built = build(str(REPO / 'configs/_base_/protocols/upernet_beit160k.py'))
    assert read(built, 'layer_decay') == pytest.approx(0.65)
    assert read(built, 'param.backbone.pos_embed.weight_decay') == 0.05  # BEiT's code decays it
    assert repr(read(built, 'param.backbone.no_such.weight_decay')) == 'absent'
    assert read(built, 'model.decode_head.channels') == 768
    with pytest.raises(AuditError, match='unknown key'):
        read(built, 'lr')
    # the precision of the built wrapper, the normalisation the preprocessor's buffers hold, the built schedulers
    assert read(built, 'wrapper.type') == 'OptimWrapper' and read(built, 'ema') is None
    assert read(built, 'preprocessor.std') == [58.395, 57.12, 57.375]
    assert (read(built, 'scheduler.1.type'), read(built, 'scheduler.1.begin')) == ('PolyLR', 1500)
    assert repr(read(built, 'scheduler.2.type')) == 'absent'


def test_a_drifted_schedule_normalisation_or_precision_fails(tmp_path):
    """Read from the built wrapper, preprocessor and schedulers: an AMP wrapper, another std, a moved milestone."""
    drifted = tmp_path / 'drifted.py'
    drifted.write_text(textwrap.dedent(f"""\
        _base_ = ['{REPO}/configs/_base_/protocols/maskrcnn_vitdet100e.py']
        optim_wrapper = dict(type='vitbench.CPUAmpOptimWrapper')  # mmengine's AMP wrapper needs a GPU to build
        model = dict(data_preprocessor=dict(std=[1.0, 1.0, 1.0]))
        param_scheduler = [dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=250),
                           dict(type='MultiStepLR', by_epoch=False, begin=0, end=184375, milestones=[163000, 177546],
                                gamma=0.1)]
        """))
    problems = audit(dict(AUDITED['maskrcnn_vitdet100e'], config=str(drifted)), repo='/')
    assert any("wrapper.type is 'CPUAmpOptimWrapper', expected 'OptimWrapper'" in p for p in problems), problems
    assert any('preprocessor.std is [1.0, 1.0, 1.0]' in p for p in problems), problems
    assert any('scheduler.1.milestones is [163000, 177546], expected [163889, 177546]' in p for p in problems), problems
    assert len(problems) == 4, problems  # the milestone twice: the resolved config's and the built scheduler's


@pytest.mark.parametrize('text,message', [
    ("p:\n  config: c.py\n  groups:\n    - lr: 1\n", "needs 'source'"),
    ("p:\n  config: c.py\n  groups:\n    - {source: s, lr: 0.1}\n", 'unknown key'),
    ("p:\n  config: c.py\n  groups:\n    - {source: s, optimizer.lr: 1e-4}\n", 'write 3.0e-3'),
    ("p:\n  config: c.py\n  groups:\n    - {source: a, optimizer.lr: 0.1}\n    - {source: b, optimizer.lr: 0.1}\n",
     'stated twice'),
    ("p: {config: c.py}\n", 'expected {config'),
])
def test_bad_tables_are_refused(tmp_path, text, message):
    path = tmp_path / 'bad.yaml'
    path.write_text(text)
    with pytest.raises(AuditError, match='bad.yaml') as info:
        load_table(str(path))
    assert message in str(info.value)
