"""Distillation teachers from timm (thesis Table 3.2: RegNetY-4/8/12/16GF teaching DeiT-B): timm's own model, loaded
from the file the user names, in the backbone dialect; checked against timm's model itself, on a tiny RegNetY
whose weights the test writes (the official DeiT teacher file keeps them under 'model')."""
import importlib.util
from pathlib import Path

import pytest
import timm
import torch

from pretrain.teacher import build_teacher

REPO = Path(__file__).resolve().parents[1]
TINY = 'regnety_002'  # timm's smallest RegNetY: the Table 3.2 teachers' family, 3M parameters


@pytest.fixture(scope='module')
def written(tmp_path_factory):
    """A RegNetY with 10 classes and its weights as the official DeiT teacher file lays them out."""
    torch.manual_seed(0)
    reference = timm.create_model(TINY, num_classes=10).eval()
    path = tmp_path_factory.mktemp('teacher') / 'regnety.pth'
    torch.save({'model': reference.state_dict()}, path)
    return reference, str(path)


def test_timm_teacher_in_the_backbone_dialect_is_timms_model_with_the_files_weights(written):
    reference, path = written
    teacher = build_teacher(dict(type='vitbench.TimmBackbone', arch=f'timm:{TINY}', checkpoint=path), num_classes=10)
    assert not teacher.training and not any(p.requires_grad for p in teacher.parameters())
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(teacher(x), reference(x), rtol=0, atol=0)
    older = build_teacher(dict(source='timm', name=TINY, checkpoint=path), num_classes=10)  # the older spelling
    with torch.no_grad():
        torch.testing.assert_close(older(x), reference(x), rtol=0, atol=0)


def test_timm_teacher_refuses_a_head_of_other_classes_a_wrong_type_and_a_missing_file(written, tmp_path):
    _, path = written
    with pytest.raises(ValueError, match=r"10 classes .* the student 1000"):
        build_teacher(dict(arch=f'timm:{TINY}', checkpoint=path), num_classes=1000)
    with pytest.raises(ValueError, match='model.teacher.type'):
        build_teacher(dict(type='vitbench.VisionTransformer', arch=f'timm:{TINY}', checkpoint=path), num_classes=10)
    with pytest.raises(FileNotFoundError, match='missing.pth.*--teacher'):
        build_teacher(dict(arch=f'timm:{TINY}', checkpoint=str(tmp_path / 'missing.pth')), num_classes=10)


def _train_tool():
    spec = importlib.util.spec_from_file_location('train_tool', REPO / 'tools' / 'train.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_teacher_option_points_the_config_at_the_file_or_says_why_not(written, tmp_path):
    from mmengine.config import Config

    from harness.experiment.cli import ConfigError
    _, path = written
    train = _train_tool()
    cfg = Config.fromfile(str(REPO / 'configs/pretrain/deit_base_distilled_in1k.py'))
    train.use_teacher(cfg, path)
    assert cfg.model.distillation.teacher.checkpoint == path
    assert cfg.model.distillation.teacher.arch == 'timm:regnety_160'  # the table's default teacher, timm's
    with pytest.raises(ConfigError, match='missing.pth: file not found'):
        train.use_teacher(cfg, str(tmp_path / 'missing.pth'))
    plain = Config.fromfile(str(REPO / 'configs/pretrain/deit_base_in1k_300e.py'))
    with pytest.raises(ConfigError, match='no distillation teacher'):
        train.use_teacher(plain, path)


@pytest.mark.parametrize('name', ['regnety_040', 'regnety_080', 'regnety_120', 'regnety_160'])
def test_table_3_2_teachers_are_timm_models(name):
    """The convnets of Table 3.2 exist in timm under the names the map's rows give (built by the paper-map test)."""
    assert timm.is_model(name)
