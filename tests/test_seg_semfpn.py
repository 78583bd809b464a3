"""MAE-lite's Semantic FPN (configs/_base_/protocols/semfpn_maelite160k.py): the configs build with MAE-lite's
neck and head shapes for the Tiny backbone, a --backbone swap narrows the neck with the new width, the neck is
MAE-lite's Feature2Pyramid_Scale layer by layer, and one real training step runs on the demo ADE20k."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope
from mmseg.registry import MODELS

import downstream  # noqa: F401  (registers the seg glue and the --backbone adapter)
from backbones.factory import variant_kwargs
from downstream.backbone_swap import head_rule_mismatches, swap_backbone
from downstream.seg.neck import ScaledFeature2Pyramid
from harness import demo_data
from harness.experiment.cli import build_runner
from harness.experiment.protocol import protocol_of

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ['configs/semfpn_vit_tiny12h_mae.py', 'configs/semfpn_vit_tiny12h_dmae.py']


def load(path: str) -> Config:
    return Config.fromfile(REPO / path)


def build_on_meta(cfg: Config):
    with DefaultScope.overwrite_default_scope('mmseg'), torch.device('meta'):
        return MODELS.build(cfg.model).eval()


def level_shapes(model, side: int):
    feats = model.neck(model.backbone(torch.empty(1, 3, side, side, device='meta')))
    return [tuple(f.shape[1:]) for f in feats], tuple(model.decode_head(feats).shape[1:])


@pytest.mark.parametrize('path', CONFIGS)
def test_config_builds_with_maelite_s_tiny_shapes(path):
    cfg = load(path)
    assert cfg.experiment.protocol.name == 'semfpn_maelite160k' and cfg.experiment.task == 'seg'
    assert cfg.model.backbone.arch == cfg.experiment.backbone == 'vit_tiny12h_patch16_224'
    assert cfg.model.backbone.init_cfg.checkpoint.startswith(('work_dirs/mae_', 'work_dirs/dmae_'))
    model = build_on_meta(cfg)
    assert not model.with_auxiliary_head
    # 512 crops, 16x16 patches: the 32 x 32 map to strides 4, 8, 16, 32, 48 channels each (192 x 0.25)
    levels, logits = level_shapes(model, 512)
    assert levels == [(48, 128, 128), (48, 64, 64), (48, 32, 32), (48, 16, 16)]
    assert logits == (150, 128, 128)  # FPNHead decodes at stride 4
    assert model.decode_head.channels == 128 and head_rule_mismatches(cfg) == []


def test_the_two_configs_differ_only_in_their_weights():
    mae, dmae = (load(p) for p in CONFIGS)
    assert protocol_of(mae) == protocol_of(dmae)
    dmae.model.backbone.init_cfg.checkpoint = mae.model.backbone.init_cfg.checkpoint
    assert dmae.model.to_dict() == mae.model.to_dict()


@pytest.mark.parametrize('arch,neck', [('deit3_small_patch16_224', 96), ('deit3_base_patch16_224', 192),
                                       ('vit_tiny12h_patch16_224', 48)])
def test_backbone_swap_narrows_the_neck_with_the_new_width(arch, neck):
    cfg = load(CONFIGS[0])
    swap_backbone(cfg, arch)
    dim = variant_kwargs(arch)['embed_dim']
    assert cfg.model.neck.embed_dim == dim and list(cfg.model.decode_head.in_channels) == [neck] * 4
    assert cfg.model.decode_head.channels == 128  # the head rule: 128 for every backbone
    assert head_rule_mismatches(cfg) == [] and protocol_of(cfg) == protocol_of(load(CONFIGS[0]))
    levels, logits = level_shapes(build_on_meta(cfg), 64)
    assert [c for c, _, _ in levels] == [neck] * 4 and logits == (150, 16, 16)


def test_the_neck_is_maelite_s_layer_by_layer():
    """Feature2Pyramid_Scale (MAE-Lite featurepyramid.py): x4 deconv-BN-GELU-deconv, x2 one deconv, x1 a 1x1
    conv, x0.5 a 1x1 conv and a max-pool; parameters counted by hand for 192 -> 48."""
    neck = ScaledFeature2Pyramid(192, norm_cfg=dict(type='BN'))
    assert [type(m).__name__ for m in neck.upsample_4x] == ['ConvTranspose2d', 'BatchNorm2d', 'GELU',
                                                           'ConvTranspose2d']
    assert [type(m).__name__ for m in neck.upsample_2x] == ['ConvTranspose2d']
    assert [type(m).__name__ for m in neck.downsample_2x] == ['Conv2d', 'MaxPool2d']
    deconv, conv1 = 192 * 48 * 4 + 48, 192 * 48 + 48
    expected = deconv + 2 * 48 + (48 * 48 * 4 + 48) + deconv + conv1 + conv1
    assert sum(p.numel() for p in neck.parameters()) == expected
    out = neck([torch.randn(1, 192, 4, 4) for _ in range(4)])
    assert [tuple(o.shape[1:]) for o in out] == [(48, 16, 16), (48, 8, 8), (48, 4, 4), (48, 2, 2)]
    with pytest.raises(ValueError, match='takes 4 maps, got 3'):
        neck([torch.randn(1, 192, 4, 4)] * 3)
    with pytest.raises(ValueError, match=r'builds exactly \[4, 2, 1, 0.5\]'):
        ScaledFeature2Pyramid(192, rescales=[2, 1, 0.5, 0.25])


@pytest.mark.slow
def test_one_training_step_on_the_demo_ade20k(tmp_path):
    """The Tiny config, from scratch, at 64 x 64 crops of the tiny demo ADE20k: one train and one val iteration."""
    root = tmp_path / 'demo'
    assert demo_data.generate(demo_data.select(['ade20k']), str(root), seed=0, scale='tiny', workers=1,
                              log=lambda message: None) == []
    data_root, crop = str(root / 'ade20k' / 'ADEChallengeData2016'), (64, 64)
    cfg = load(CONFIGS[0])
    cfg.model.backbone.init_cfg = None
    cfg.model.backbone.img_size = crop[0]
    cfg.model.data_preprocessor.size = crop
    cfg.model.test_cfg = dict(mode='slide', crop_size=crop, stride=(48, 48))
    cfg.train_dataloader.dataset.pipeline[2].scale = (256, 64)
    cfg.train_dataloader.dataset.pipeline[3].crop_size = crop
    cfg.val_dataloader.dataset.pipeline[1].scale = (256, 64)
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[loader].update(num_workers=0, persistent_workers=False)
        cfg[loader].dataset.update(data_root=data_root)
    cfg.train_dataloader.batch_size = 2
    cfg.val_dataloader.dataset.indices = 2
    cfg.merge_from_dict({'train_cfg.max_iters': 1, 'train_cfg.val_interval': 1, 'default_hooks.logger.interval': 1})
    cfg.work_dir = str(tmp_path / 'run')
    build_runner(cfg).train()
    assert (tmp_path / 'run' / 'iter_1.pth').is_file() and (tmp_path / 'run' / 'result.json').is_file()
