"""One backbone config dialect (backbones/backbone_type.py): ``dict(type=<the family's registered type>,
arch=<variant>, **overrides)`` in every shipped config, taken by the suite's recipes (type given, with or
without its scope, or left out; another family's refused in one line), and always written by a swap, which drops
what the family's record says a swap to it drops."""
import dataclasses
from pathlib import Path

import pytest
from mmengine.config import Config
from mmengine.registry import DefaultScope

import downstream  # noqa: F401  (registers the tasks' modules and the --backbone adapters)
from backbones import FAMILIES, family_record, get_family
from backbones.backbone_type import backbone_type, check_backbone_type
from downstream.backbone_swap import swap_backbone
from pretrain.classifier import ImageClassifier
from pretrain.mae import MAE
from pretrain.mocov3 import MoCoV3
from vitbench.registry import MODELS

REPO = Path(__file__).resolve().parents[1]
DEMO = 'vit_demo_patch8_64'
CONFIGS = sorted(p for p in (REPO / 'configs').rglob('*.py') if 'pipelines' not in p.parts)


def _state(model):
    return {k: tuple(v.shape) for k, v in model.state_dict().items()}


@pytest.mark.parametrize('type_', [None, 'vitbench.VisionTransformer', 'VisionTransformer'])
def test_a_recipe_takes_its_familys_type_with_or_without_scope_or_none(type_):
    cfg = dict(arch=DEMO, depth=2) if type_ is None else dict(type=type_, arch=DEMO, depth=2)
    model = ImageClassifier(cfg, num_classes=3)
    assert (model.arch, model.backbone_overrides) == (DEMO, dict(depth=2))  # the type is no override
    assert _state(model) == _state(ImageClassifier(dict(arch=DEMO, depth=2), num_classes=3))


@pytest.mark.parametrize('build', [lambda b: ImageClassifier(b, num_classes=3), lambda b: MAE(b),
                                   lambda b: MoCoV3(b, dim=16, mlp_dim=32)], ids=['classifier', 'mae', 'mocov3'])
def test_a_type_of_another_family_is_refused_in_one_line(build):
    with pytest.raises(ValueError) as e:
        build(dict(type='vitbench.CaiT', arch=DEMO, depth=1))
    assert str(e.value) == (f"model.backbone.type='vitbench.CaiT': arch '{DEMO}' is not a CaiT variant; expected "
                            "'vitbench.VisionTransformer' (ViT's type)")


def test_an_unregistered_type_and_a_timm_name():
    with pytest.raises(ValueError, match=r"model.backbone.type='vitbench.ViT': no backbone family is registered as "
                                         r"it; expected 'vitbench.VisionTransformer'"):
        check_backbone_type('vitbench.ViT', DEMO)
    check_backbone_type('vitbench.TimmBackbone', 'timm:test_vit')
    assert backbone_type('timm:test_vit') == 'vitbench.TimmBackbone'
    assert backbone_type('resmlp_24', like='VisionTransformer') == 'ResMLP'  # the scope of the type it replaces


def test_every_shipped_backbone_names_its_familys_type():
    """Every config that names a variant (the bases that leave ``arch`` to their configs name neither)."""
    checked, wrong = [], []
    for path in CONFIGS:
        model = Config.fromfile(path, import_custom_modules=False).get('model')
        backbone = model.get('backbone') if isinstance(model, dict) else None
        if backbone and backbone.get('arch'):
            checked.append(path)
            if backbone.get('type') != backbone_type(backbone.arch):
                wrong.append(f"{path.relative_to(REPO)}: type={backbone.get('type')!r}, arch={backbone.arch!r}")
    assert not wrong, '\n'.join(wrong)
    assert any('pretrain' in p.parts for p in checked) and any(p.name.startswith('upernet') for p in checked)


def test_a_swap_of_a_classifier_config_writes_the_type_and_builds():
    cfg = Config.fromfile(REPO / 'configs/demo/deit3_sup_demo.py')
    swap_backbone(cfg, 'resmlp_demo_patch8_64')
    assert (cfg.model.backbone.type, cfg.model.backbone.arch) == ('vitbench.ResMLP', 'resmlp_demo_patch8_64')
    with DefaultScope.overwrite_default_scope('vitbench'):
        model = MODELS.build(cfg.model)
    assert type(model.backbone).__name__ == 'ResMLP'
    untyped = Config.fromfile(REPO / 'configs/demo/deit3_sup_demo.py')
    del untyped.model.backbone['type']  # a config of one's own without type: the swap writes it
    swap_backbone(untyped, 'cait_xxs24_224')
    assert untyped.model.backbone.type == 'vitbench.CaiT'


def test_the_record_says_whether_a_swap_drops_the_configs_checkpoint(monkeypatch):
    """timm's record drops the config's checkpoint (another backbone's weights); a family's record, not its name,
    decides: the same field set on CaiT's drops it there too."""
    config = REPO / 'configs/finetune/deit3_base_in1k_ft224.py'
    assert family_record('timm:test_vit').swap_drops_checkpoint
    timm = Config.fromfile(config)
    swap_backbone(timm, 'timm:test_vit')
    assert timm.model.backbone.init_cfg is None and timm.model.backbone.type == 'vitbench.TimmBackbone'
    kept = Config.fromfile(config)
    swap_backbone(kept, 'cait_xxs24_224')
    assert kept.model.backbone.init_cfg.checkpoint == 'work_dirs/deit3_base_in1k_800e/backbone.pth'
    monkeypatch.setitem(FAMILIES, 'cait', dataclasses.replace(get_family('cait'), swap_drops_checkpoint=True))
    dropped = Config.fromfile(config)
    swap_backbone(dropped, 'cait_xxs24_224')
    assert dropped.model.backbone.init_cfg is None


def test_swap_drops_apply_to_dense_tasks_only():
    """timm's record drops the dense ViT's options (a Swin's own window_size is another thing) from a dense task's
    config; a classifier's own overrides stay, for timm's constructor to take or the builder to note."""
    dense = Config.fromfile(REPO / 'configs/demo/maskrcnn_demo.py')
    assert dense.model.backbone.window_size
    swap_backbone(dense, 'timm:test_vit')
    assert 'window_size' not in dense.model.backbone and 'global_attn_indexes' not in dense.model.backbone
    classifier = Config.fromfile(REPO / 'configs/demo/deit3_sup_demo.py')
    classifier.model.backbone.final_norm = False
    swap_backbone(classifier, 'timm:test_vit')
    assert classifier.model.backbone.final_norm is False


def test_a_teacher_takes_the_dialect_too(tmp_path):
    """A distillation teacher of the suite (pretrain/teacher.py) may name its family's type, checked as a
    backbone's: the same weights with or without it, another family's refused in one line naming the key."""
    from backbones import create_model, save_checkpoint
    from pretrain.teacher import build_teacher
    path = tmp_path / 'teacher.pth'
    save_checkpoint(str(path), create_model(DEMO, num_classes=3, depth=1), arch=DEMO, overrides=dict(depth=1))
    typed = build_teacher(dict(type='vitbench.VisionTransformer', checkpoint=str(path)), num_classes=3)
    plain = build_teacher(dict(checkpoint=str(path)), num_classes=3)
    assert all((a == b).all() for a, b in zip(typed.state_dict().values(), plain.state_dict().values()))
    with pytest.raises(ValueError) as e:
        build_teacher(dict(type='vitbench.ResMLP', checkpoint=str(path)), num_classes=3)
    assert str(e.value).startswith(f"model.teacher.type='vitbench.ResMLP': arch '{DEMO}' is not a ResMLP variant")
