"""The vitbench registries: children of mmengine's roots, reachable from the mmseg / mmdet scopes and from
default_scope='vitbench', and importing them registers or patches nothing."""
import subprocess
import sys
from pathlib import Path

import pytest
from mmengine.config import Config
from mmengine.registry import DefaultScope

FIXTURES = Path(__file__).parent / 'toy_fixtures'


@pytest.fixture
def toy_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))


def _config_in_scope(tmp_path, scope, model):
    path = tmp_path / f'{scope}_cfg.py'
    path.write_text(f"default_scope = '{scope}'\n"
                    "custom_imports = dict(imports=['toy_components'], allow_failed_imports=False)\n"
                    f'model = {model!r}\n')
    return Config.fromfile(str(path))


@pytest.mark.parametrize('scope', ['mmseg', 'mmdet'])
def test_vitbench_component_builds_from_other_scopes(tmp_path, toy_importable, scope):
    registry = __import__(f'{scope}.registry', fromlist=['MODELS']).MODELS
    cfg = _config_in_scope(tmp_path, scope, dict(type='vitbench.TinyProbe', width=7))
    with DefaultScope.overwrite_default_scope(scope):
        probe = registry.build(cfg.model)
    assert type(probe).__name__ == 'TinyProbe' and probe.width == 7


def test_vitbench_backbone_inside_an_mmseg_model(tmp_path, toy_importable):
    """The real use: an mmseg model whose backbone comes from the vitbench scope."""
    from mmseg.registry import MODELS
    model = dict(type='EncoderDecoder',
                 data_preprocessor=dict(type='SegDataPreProcessor'),
                 backbone=dict(type='vitbench.TinyProbe', width=5),
                 decode_head=dict(type='FCNHead', in_channels=8, channels=8, num_convs=1, num_classes=3))
    cfg = _config_in_scope(tmp_path, 'mmseg', model)
    with DefaultScope.overwrite_default_scope('mmseg'):
        segmentor = MODELS.build(cfg.model)
    assert type(segmentor.backbone).__name__ == 'TinyProbe' and segmentor.backbone.width == 5


def test_default_scope_vitbench_finds_components_without_prefix(tmp_path, toy_importable):
    from mmengine.registry import MODELS
    cfg = _config_in_scope(tmp_path, 'vitbench', dict(type='TinyProbe'))
    with DefaultScope.overwrite_default_scope('vitbench'):
        assert type(MODELS.build(cfg.model)).__name__ == 'TinyProbe'


def test_vitbench_registries_are_children_of_mmengine_roots():
    import mmengine.registry as root
    import vitbench.registry as ours
    for name in ['MODELS', 'DATASETS', 'TRANSFORMS', 'METRICS', 'OPTIMIZERS', 'OPTIM_WRAPPER_CONSTRUCTORS',
                 'HOOKS', 'PARAM_SCHEDULERS', 'DATA_SAMPLERS', 'VISUALIZERS', 'LOOPS']:
        registry = getattr(ours, name)
        assert registry.scope == 'vitbench' and registry.parent is getattr(root, name), name
    assert sys.modules['vitbench.registry'] is ours


def _fresh_python(code: str) -> str:
    result = subprocess.run([sys.executable, '-c', code], cwd=Path(__file__).resolve().parents[1],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip()


def test_importing_the_registry_imports_and_patches_nothing_else():
    out = _fresh_python(
        'import sys, torch, mmengine.fileio as f\n'
        'before = (len(torch.serialization.get_safe_globals()), type(f.get_file_backend("x.pth")))\n'
        'import vitbench.registry\n'
        'after = (len(torch.serialization.get_safe_globals()), type(f.get_file_backend("x.pth")))\n'
        'suite = sorted(m for m in sys.modules if m.split(".")[0] in ("backbones", "pretrain", "downstream")\n'
        '               or m.startswith(("vitbench.engine", "harness.experiment")))\n'
        'print(before == after, suite)')
    assert out == 'True []'


def test_a_vitbench_type_from_mmseg_finds_its_module_through_the_registry_locations():
    """No custom_imports and no import of the suite: mmengine imports ``vitbench.registry`` for the scope, and
    the registry's locations import the backbone, the layer-decay constructor and (through the layer package
    ``downstream``, which names its tasks: the registry names none) a task's dataset when they are looked up."""
    out = _fresh_python(
        'import sys\n'
        'from mmengine.registry import DefaultScope\n'
        'from mmseg.registry import DATASETS, MODELS, OPTIM_WRAPPER_CONSTRUCTORS\n'
        'assert "backbones" not in sys.modules\n'
        "with DefaultScope.overwrite_default_scope('mmseg'):\n"
        "    d = DATASETS.get('vitbench.ADE20KDataset')  # first: no other lookup has imported downstream\n"
        "    m = MODELS.build(dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', out_indices=[1]))\n"
        "    c = OPTIM_WRAPPER_CONSTRUCTORS.get('vitbench.LayerDecayOptimWrapperConstructor')\n"
        'print(type(m).__module__, c.__module__, d.__module__)')
    assert out.splitlines()[-1] == 'backbones.dense vitbench.engine.layer_decay downstream.seg.datasets'
