"""ResMLP (thesis ch. 4): the published sizes, timm's ResMLP as the independent reference (its state dicts and
the official bare ones load through our loader and give the same logits), layer ids, the dense backbone and
UperNet on it (Table 4.6's setting), and ``--backbone resmlp_demo_patch8_64`` in the demo configs."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

import downstream  # noqa: F401  (registers the seg / det glue and the --backbone adapters)
from _backbone_helpers import materialize, randomize, resmlp_official, timm_model, timm_resmlp
from backbones import CheckpointError, ResMLPBackbone, create_model, load_checkpoint
from backbones.complexity import count_flops, count_params
from downstream.backbone_swap import swap_backbone
from test_seg_train import one_iteration_cfg, tiny_ade  # noqa: F401  (the tiny demo ADE20k fixture)
from harness.experiment.cli import build_runner

REPO = Path(__file__).resolve().parents[1]
# variant -> (timm model, parameters (M) as published, GFLOPs as published, where); None: not in the thesis
PUBLISHED = {
    'resmlp_12': ('resmlp_12_224', 15.4, 3.0, 'thesis Table 4.3 (ResMLP-S12)'),
    'resmlp_24': ('resmlp_24_224', 30.0, 6.0, 'thesis Table 4.3 (ResMLP-S24)'),
    'resmlp_36': ('resmlp_36_224', None, None, 'official resmlp_36 (no thesis row)'),
    'resmlp_b24': ('resmlp_big_24_224', 129.1, 100.2, 'thesis Table 4.3 (ResMLP-B24/8)'),
}


def _params(name, **overrides):
    with torch.device('meta'):
        return count_params(create_model(name, **overrides))


@pytest.mark.parametrize('name', PUBLISHED)
def test_parameter_counts_match_the_thesis_and_timm(name):
    timm_name, paper, _, where = PUBLISHED[name]
    ours = _params(name)
    with torch.device('meta'):
        import timm
        assert ours == count_params(timm.create_model(timm_name)), 'same network as timm'
    if paper is not None:
        assert abs(ours / 1e6 - paper) <= 0.05, where


@pytest.mark.parametrize('name', ['resmlp_12', 'resmlp_b24'])
def test_flops_match_the_thesis(name):
    _, _, gflops, where = PUBLISHED[name]
    assert round(count_flops(materialize(create_model, name)) / 1e9, 1) == gflops, where


def _load(name, sd, tmp_path, **overrides):
    path = tmp_path / 'weights.pth'
    torch.save(sd, path)
    model = materialize(create_model, name, **overrides)  # uninitialised: the loader must fill every tensor
    report = load_checkpoint(model, str(path), verbose=False)
    return model.eval(), report


@pytest.mark.parametrize('official', [False, True], ids=['timm', 'official'])
@pytest.mark.parametrize('name,dim,patch', [('resmlp_24', 384, 16), ('resmlp_b24', 768, 8)])
def test_timm_and_official_files_give_timm_s_logits(name, dim, patch, official, tmp_path):
    """2 blocks at 64x64: timm's state dict and the official bare one (its names: attn, mlp, gamma_1, (C,)
    Affine) load into the variant and give timm's logits."""
    ref = timm_resmlp(dim, depth=2, patch_size=patch, img_size=64)
    sd = resmlp_official(ref.state_dict()) if official else ref.state_dict()
    ours, report = _load(name, sd, tmp_path, depth=2, img_size=64)
    assert report.source == ('facebookresearch/deit ResMLP' if official else 'timm ResMLP')
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('name', ['resmlp_12', 'resmlp_24'])
def test_full_variant_equals_timm_s_model(name, tmp_path):
    """Every block at 224: timm's resmlp_*_224 with random weights (a distilled release has the same keys)."""
    ref = timm_model(PUBLISHED[name][0])
    ours, _ = _load(name, resmlp_official(ref.state_dict()), tmp_path)
    x = torch.randn(2, 3, 224, 224)
    with torch.no_grad():
        diff = (ours(x) - ref(x)).abs().max().item()
    assert diff <= 1e-5


def test_a_file_of_another_variant_or_grid_is_refused_clearly(tmp_path):
    sd = resmlp_official(timm_resmlp(384, depth=3, img_size=64).state_dict())
    with pytest.raises(CheckpointError) as e:
        _load('resmlp_24', sd, tmp_path, depth=2, img_size=64)
    assert 'unexpected in the checkpoint' in str(e.value) and 'blocks.2.linear_tokens.weight' in str(e.value)
    assert 'the checkpoint has 3 blocks, the model 2' in str(e.value)
    with pytest.raises(CheckpointError, match='token grid') as e:
        _load('resmlp_24', sd, tmp_path, depth=3, img_size=96)  # 6x6 patches: 36x36 cross-patch weights
    assert 'linear_tokens.weight: checkpoint (16, 16) vs model (36, 36)' in str(e.value)


def test_the_grid_is_fixed_and_says_so():
    model = create_model('resmlp_demo_patch8_64', num_classes=10)
    assert model(torch.randn(1, 3, 64, 64)).shape == (1, 10)
    with pytest.raises(ValueError, match='fixed 8x8 grid'):
        model(torch.randn(1, 3, 96, 96))


def test_layer_ids_for_layer_decay():
    model = create_model('resmlp_24', depth=3, img_size=64)
    assert model.num_layers == 3 and model.no_weight_decay() == set()
    ids = {n: model.get_layer_id(n) for n, _ in model.named_parameters()}
    assert ids['patch_embed.proj.weight'] == 0
    assert ids['blocks.0.linear_tokens.weight'] == ids['blocks.0.norm1.alpha'] == 1
    assert ids['blocks.2.ls2.gamma'] == 3 and ids['norm.beta'] == ids['head.weight'] == 4
    assert model.get_layer_id('backbone.blocks.1.mlp_channels.fc1.bias') == 2


def test_dense_maps_are_the_patch_tokens_and_smaller_inputs_are_padded():
    dense = randomize(ResMLPBackbone(arch='resmlp_demo_patch8_64', out_indices=[1, 5], final_norm=True)).eval()
    classifier = create_model('resmlp_demo_patch8_64', num_classes=0, global_pool='')
    classifier.load_state_dict(dense.state_dict())
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        low, top = dense(x)
        tokens = classifier.eval().forward_features(x)
    assert low.shape == top.shape == (2, 192, 8, 8)
    torch.testing.assert_close(top.flatten(2).transpose(1, 2), tokens)
    with torch.no_grad():
        (crop,) = ResMLPBackbone(arch='resmlp_demo_patch8_64', out_indices=-1)(torch.randn(1, 3, 40, 64))
    assert crop.shape == (1, 192, 5, 8)  # a slide window at the border: padded to 64x64, cropped back
    with pytest.raises(ValueError, match='built for 64x64 inputs got 72x64'):
        dense(torch.randn(1, 3, 72, 64))


def _build_seg(cfg):
    from mmseg.registry import MODELS
    with DefaultScope.overwrite_default_scope('mmseg'), torch.device('meta'):
        return MODELS.build(cfg.model)


def test_upernet_config_follows_table_4_6():
    cfg = Config.fromfile(REPO / 'configs/upernet_resmlp_24.py')
    assert cfg.model.backbone.type == 'vitbench.ResMLP' and cfg.experiment.backbone == 'resmlp_24'
    assert cfg.model.data_preprocessor.size == (224, 224) == cfg.model.test_cfg.crop_size
    assert cfg.model.test_cfg.mode == 'slide' and cfg.model.backbone.img_size == (224, 224)
    assert cfg.train_dataloader.dataset.pipeline[2]['scale'] == (896, 224)
    model = _build_seg(cfg)
    assert model.backbone.out_indices == [7, 11, 15, 23] and model.backbone.grid_size == (14, 14)
    feats = model.eval().extract_feat(torch.empty(1, 3, 224, 224, device='meta'))
    assert [tuple(f.shape[1:]) for f in feats] == [(384, 56, 56), (384, 28, 28), (384, 14, 14), (384, 7, 7)]


def test_swap_into_the_demo_upernet_trains_two_iterations(tiny_ade, tmp_path):  # noqa: F811
    cfg = one_iteration_cfg(tiny_ade, tmp_path, backbone='resmlp_demo_patch8_64')
    assert cfg.model.backbone.type == 'vitbench.ResMLP' and cfg.model.backbone.out_indices == [1, 2, 3, 5]
    assert cfg.model.backbone.img_size == (128, 128)  # the demo's crop
    assert cfg.model.decode_head.channels == 64  # the demo protocol's head rule, for every backbone
    cfg.train_cfg.max_iters = cfg.train_cfg.val_interval = 2
    runner = build_runner(cfg)
    runner.train()
    assert type(runner.model.backbone).__name__ == 'ResMLPBackbone'
    assert runner.message_hub.get_scalar('val/mIoU') is not None and (tmp_path / 'iter_2.pth').is_file()


@pytest.mark.parametrize('config', ['configs/demo/maskrcnn_demo.py', 'configs/demo/transfer_cifar10_demo.py'])
def test_swap_into_the_demo_detection_and_transfer_configs(config):
    cfg = Config.fromfile(REPO / config)
    swap_backbone(cfg, 'resmlp_demo_patch8_64')
    backbone = cfg.model.backbone
    assert backbone.arch == cfg.experiment.backbone == 'resmlp_demo_patch8_64'
    if cfg.experiment.task == 'det':
        assert backbone.type == 'vitbench.ResMLP' and backbone.out_indices == [5]
        assert 'window_size' not in backbone and 'global_attn_indexes' not in backbone
        assert backbone.img_size == cfg.model.data_preprocessor.pad_size_divisor == 128  # the padded batch
    else:  # a classifier: create_model(arch, img_size=32) -> a 4x4 grid
        model = create_model(backbone.arch, num_classes=10, img_size=backbone.img_size)
        assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)
