"""The OpenMMLab stack is installed and works: imports, mmcv's compiled ops, cross-scope registry."""
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

FIXTURES = Path(__file__).parent / 'foundation_fixtures'


def test_downstream_toolboxes_import():
    import mmdet.models  # noqa: F401
    import mmseg.models  # noqa: F401
    import timm
    assert timm.create_model('vit_tiny_patch16_224', pretrained=False, num_classes=3, img_size=32,
                             patch_size=16)(torch.zeros(1, 3, 32, 32)).shape == (1, 3)


def test_mmcv_ops_nms_and_roi_align_run():
    from mmcv.ops import RoIAlign, nms
    boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
    dets, keep = nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
    assert keep.tolist() == [0, 2]
    assert dets[:, 4].tolist() == pytest.approx([0.9, 0.7])
    # A 4x4 ramp pooled over the whole map into 2x2 bins: each bin averages its quadrant.
    feats = torch.arange(16.).view(1, 1, 4, 4)
    pooled = RoIAlign((2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)(
        feats, torch.tensor([[0., 0., 0., 4., 4.]]))
    assert pooled.flatten().tolist() == pytest.approx([2.5, 4.5, 10.5, 12.5])


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


def test_env_check_reports_a_working_stack():
    import subprocess
    result = subprocess.run([sys.executable, 'tools/env_check.py'], cwd=Path(__file__).resolve().parents[1],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'nms and RoIAlign run' in result.stdout and 'mmcv         2.1.0' in result.stdout
