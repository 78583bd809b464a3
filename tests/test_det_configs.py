"""The Mask R-CNN configs build, their pyramids match the heads, and --backbone keeps them consistent."""
import os.path as osp

import pytest
import torch
from mmengine.config import Config

from backbones import ViTBackbone, create_model
from downstream.det import global_blocks, pyramid_scales
from downstream.backbone_swap import swap_backbone

pytest.importorskip('mmcv.ops')
REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
CONFIGS = ['configs/maskrcnn_deit3_b.py', 'configs/maskrcnn_deit3_s.py', 'configs/maskrcnn_vit_tiny12h_mae.py',
           'configs/demo/maskrcnn_demo.py']  # the dmae config differs from the mae one only in its checkpoint


def load(path):
    return Config.fromfile(osp.join(REPO, path))


def build_model(cfg):
    from mmengine.registry import init_default_scope
    from mmengine.utils import import_modules_from_strings
    import_modules_from_strings(**cfg.custom_imports)
    init_default_scope(cfg.default_scope)
    from mmdet.registry import MODELS
    return MODELS.build(cfg.model)


@pytest.mark.parametrize('path', CONFIGS)
def test_config_builds_and_its_pyramid_feeds_the_heads(path):
    cfg = load(path)
    checkpoint = cfg.model.backbone.init_cfg and cfg.model.backbone.init_cfg.checkpoint
    assert checkpoint == cfg.get('checkpoint'), 'init_cfg must read the `checkpoint` variable at the top'
    assert cfg.experiment.task == 'det' and cfg.experiment.backbone == cfg.model.backbone.arch
    model = build_model(cfg)  # without the checkpoint: loading happens in init_weights, when training starts
    assert model.neck.in_channels == model.backbone.embed_dim
    assert model.backbone.out_indices == [model.backbone.num_layers - 1]
    windowed = [i for i, b in enumerate(model.backbone.blocks) if b.window_size]
    assert sorted(set(range(model.backbone.num_layers)) - set(windowed)) == cfg.model.backbone.global_attn_indexes
    patch = model.backbone.patch_embed.patch_size[0]
    x = torch.randn(1, 3, 8 * patch, 8 * patch)
    with torch.no_grad():
        feats = model.eval().extract_feat(x)
    strides = [(x.shape[-2] // f.shape[-2], x.shape[-1] // f.shape[-1]) for f in feats]
    assert strides == [(4, 4), (8, 8), (16, 16), (32, 32), (64, 64)] == model.rpn_head.prior_generator.strides
    for extractor in (model.roi_head.bbox_roi_extractor, model.roi_head.mask_roi_extractor):
        assert list(extractor.featmap_strides) == [s for s, _ in strides[:4]]
    assert {f.shape[1] for f in feats} == {model.rpn_head.in_channels, model.roi_head.bbox_head.in_channels}


def test_lsj_sizes_schedule_and_optimiser_follow_the_protocols():
    b, tiny = load('configs/maskrcnn_deit3_b.py'), load('configs/maskrcnn_vit_tiny12h_mae.py')
    assert (b.image_size, b.model.backbone.img_size, b.model.backbone.window_size) == ((1024, 1024), 1024, 14)
    assert (tiny.image_size, tiny.model.backbone.img_size) == ((640, 640), 640)
    for cfg, size in ((b, (1024, 1024)), (tiny, (640, 640))):
        train = {t['type']: t for t in cfg.train_dataloader.dataset.pipeline}
        test = {t['type']: t for t in cfg.val_dataloader.dataset.pipeline}
        assert train['RandomResize']['scale'] == size and train['RandomResize']['ratio_range'] == (0.1, 2.0)
        assert train['RandomCrop']['crop_size'] == size and test['Resize']['scale'] == size
        assert 'FilterAnnotations' in train and 'Pad' not in train and 'Pad' not in test
        assert cfg.model.data_preprocessor.pad_size_divisor == size[0]  # batches padded to the square
    assert b.train_cfg.max_iters == 184375 == 100 * 118000 // 64  # 100 epochs at batch 64
    assert b.optim_wrapper.paramwise_cfg.layer_decay_rate == 0.7 and b.model.backbone.drop_path_rate == 0.1
    assert tiny.optim_wrapper.paramwise_cfg.layer_decay_rate == 1.0 and tiny.model.backbone.drop_path_rate == 0.0
    dmae = load('configs/maskrcnn_vit_tiny12h_dmae.py')
    assert dmae.model.backbone.init_cfg.checkpoint == 'work_dirs/dmae_vit_tiny12h_in1k_400e/backbone.pth'


def test_a_missing_backbone_checkpoint_fails_when_weights_are_initialised():
    cfg = load('configs/maskrcnn_vit_tiny12h_mae.py')
    if osp.isfile(osp.join(REPO, cfg.checkpoint)):
        pytest.skip(f'{cfg.checkpoint} exists in this checkout')
    model = build_model(cfg)
    with pytest.raises(FileNotFoundError, match='mae_vit_tiny12h_in1k_400e/backbone.pth'):
        model.init_weights()


def test_windowed_attention_is_global_at_the_pretraining_resolution():
    """Window 14 is the 224-pixel pretraining grid: there the windowed backbone is the pretrained one."""
    cfg = load('configs/maskrcnn_deit3_b.py').model.backbone
    small = dict(depth=4, embed_dim=48, num_heads=3)  # the config's layout at a test-sized width
    windowed = ViTBackbone(arch=cfg.arch, img_size=224, out_indices=-1, final_norm=False, window_size=cfg.window_size,
                           global_attn_indexes=[1, 3], **small).eval()
    plain = create_model(cfg.arch, num_classes=0, img_size=224, **small).eval()
    plain.load_state_dict(windowed.state_dict(), strict=False)
    x = torch.randn(1, 3, 224, 224)
    with torch.no_grad():
        (out,) = windowed(x)
        expected = plain.forward_intermediates(x, [3], intermediates_only=True)[0]
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
        (big,) = windowed(torch.randn(1, 3, 448, 448))  # 28x28 tokens: four windows
    assert big.shape == (1, 48, 28, 28)


@pytest.mark.parametrize('name, depth, patch, dim', [
    ('vit_tiny12h_patch16_224', 12, 16, 192), ('deit3_large_patch16_224', 24, 16, 1024),
    ('deit3_base_patch16_18x2', 18, 16, 768), ('vit_demo_patch8_64', 6, 8, 192)])
@pytest.mark.parametrize('path', ['configs/maskrcnn_deit3_b.py', 'configs/demo/maskrcnn_demo.py'])
def test_backbone_swap_rewrites_pyramid_width_scales_and_global_blocks(path, name, depth, patch, dim):
    cfg = load(path)
    swap_backbone(cfg, name)
    backbone, neck = cfg.model.backbone, cfg.model.neck
    assert backbone.arch == cfg.experiment.backbone == name and backbone.out_indices == [depth - 1]
    assert backbone.global_attn_indexes == global_blocks(depth) and backbone.global_attn_indexes[-1] == depth - 1
    assert neck.in_channels == dim and neck.scales == [patch / 4, patch / 8, patch / 16, patch / 32]


def test_global_blocks_and_scales_follow_vitdet():
    assert global_blocks(12) == [2, 5, 8, 11] and global_blocks(24) == [5, 11, 17, 23]
    assert global_blocks(32) == [7, 15, 23, 31] and global_blocks(2) == [0, 1]
    assert pyramid_scales(16) == (4, 2, 1, 0.5) and pyramid_scales(8) == (2, 1, 0.5, 0.25)
    with pytest.raises(ValueError, match='patch size 14'):
        pyramid_scales(14)


def test_swap_to_cait_drops_windowed_attention_and_builds():
    cfg = load('configs/demo/maskrcnn_demo.py')
    cfg.model.backbone.depth = 2
    swap_backbone(cfg, 'cait_xxs24_224')
    assert cfg.model.backbone.type == 'vitbench.CaiT' and 'window_size' not in cfg.model.backbone
    model = build_model(cfg)
    with torch.no_grad():
        feats = model.eval().extract_feat(torch.randn(1, 3, 64, 64))
    assert [f.shape[-1] for f in feats] == [16, 8, 4, 2, 1] and feats[0].shape[1] == cfg.model.neck.out_channels


def test_swap_to_a_backbone_whose_patches_do_not_tile_the_batches_is_refused():
    cfg = load('configs/maskrcnn_vit_tiny12h_mae.py')
    cfg.model.data_preprocessor.pad_size_divisor = 648  # 640 + 8: not a multiple of 16
    with pytest.raises(ValueError, match=r'16x16 patches, which do not tile the 648x648 batches'):
        swap_backbone(cfg, 'deit3_small_patch16_224')
    with pytest.raises(ValueError, match='patch size 14'):
        swap_backbone(load('configs/maskrcnn_deit3_b.py'), 'deit3_huge_patch14_224')
