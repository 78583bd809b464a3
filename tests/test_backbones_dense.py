"""Dense use: multi-level (B, C, H/p, W/p) outputs, windowed attention, registered mmseg / mmdet backbones."""
import numpy as np
import pytest
import torch

from _backbone_helpers import randomize, timm_model
from backbones import ViTBackbone, create_model
from vitbench.registry import MODELS

TINY = dict(embed_dim=48, num_heads=3, depth=4)


def test_dense_outputs_512_and_non_square():
    model = ViTBackbone(img_size=224, out_indices=(0, 1, 3), **TINY).eval()
    with torch.no_grad():
        outs = model(torch.randn(1, 3, 512, 512))
        assert [o.shape for o in outs] == [(1, 48, 32, 32)] * 3
        outs = model(torch.randn(2, 3, 224, 320))
        assert [o.shape for o in outs] == [(2, 48, 14, 20)] * 3
    with pytest.raises(ValueError, match='500x512 is not divisible by the patch size 16x16'):
        model(torch.randn(1, 3, 500, 512))


def test_dense_maps_are_the_patch_tokens():
    model = randomize(ViTBackbone(arch='deit_tiny_distilled_patch16_224', depth=2, img_size=64, out_indices=-1))
    x = torch.randn(1, 3, 64, 96)
    with torch.no_grad():
        (out,) = model.eval()(x)
        tokens = model.norm(model.blocks[1](model.blocks[0](model._pos_embed(*model.patch_embed(x)), grid=(4, 6))))
    assert out.shape == (1, 192, 4, 6)
    torch.testing.assert_close(out, tokens[:, 2:].transpose(1, 2).reshape(1, 192, 4, 6))  # cls + dist skipped


@pytest.mark.parametrize('class_token', [True, False])
def test_window_covering_the_map_equals_global_attention(class_token):
    kw = dict(TINY, img_size=(96, 128), class_token=class_token, global_pool='token' if class_token else 'avg')
    ref = randomize(create_model('deit_tiny_patch16_224', **kw)).eval()
    x = torch.randn(2, 3, 96, 128)                       # a 6x8 token grid
    for window in (8, 11):                               # exact cover, and a padded, masked cover
        windowed = create_model('deit_tiny_patch16_224', window_size=window, **kw)
        windowed.load_state_dict(ref.state_dict())
        with torch.no_grad():
            torch.testing.assert_close(windowed.eval()(x), ref(x), rtol=1e-5, atol=1e-5)
    local = create_model('deit_tiny_patch16_224', window_size=3, global_attn_indexes=(3,), **kw)
    local.load_state_dict(ref.state_dict())
    with torch.no_grad():
        assert not torch.allclose(local.eval()(x), ref(x), atol=1e-3)


def test_windowed_parallel_blocks_and_padding_run():
    model = ViTBackbone(arch='deit3_small_patch16_18x2', depth=2, img_size=64, window_size=5,
                        global_attn_indexes=(1,), out_indices=(0, 1))
    outs = model(torch.randn(1, 3, 112, 144))            # 7x9 grid, padded to 10x10 windows
    assert [o.shape for o in outs] == [(1, 384, 7, 9)] * 2
    outs[-1].mean().backward()
    assert model.blocks[0].attns[1].attn.qkv.weight.grad is not None


def test_cait_dense_maps_come_from_the_self_attention_trunk(tmp_path):
    ref = timm_model('cait_xxs24_224', depth=3, img_size=64)
    path = tmp_path / 'cait.pth'
    torch.save(ref.state_dict(), path)
    model = MODELS.build(dict(type='vitbench.CaiT', arch='cait_xxs24_224', depth=3, img_size=64,
                              out_indices=(1, 2), init_cfg=dict(type='Pretrained', checkpoint=str(path))))
    model.init_weights()
    assert model.blocks_token_only is None and model.cls_token is None
    x = torch.randn(1, 3, 64, 96)
    with torch.no_grad():
        outs = model.eval()(x)
        classifier = create_model('cait_xxs24_224', depth=3, img_size=64, checkpoint=str(path)).eval()
        # the dense maps: block 1's as it is, the last block's through the final norm
        expected = [classifier.forward_intermediates(x, (1, 2), intermediates_only=True)[0],
                    classifier.forward_intermediates(x, [2], norm=True, intermediates_only=True)[0]]
    assert [o.shape for o in outs] == [(1, 192, 4, 6)] * 2
    for a, b in zip(outs, expected):
        torch.testing.assert_close(a, b)


def test_registered_backbone_loads_pretrained_through_the_vitbench_loader(tmp_path):
    from _backbone_helpers import deit3_official
    ref = timm_model('deit3_small_patch16_224', depth=2, img_size=64)
    path = tmp_path / 'deit3.pth'
    torch.save(deit3_official(ref.state_dict()), path)   # mmengine's own loader would miss gamma_1/gamma_2
    model = MODELS.build(dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', depth=2,
                              img_size=128, out_indices=(0, 1), init_cfg=dict(type='Pretrained', checkpoint=str(path))))
    model.init_weights()
    assert model.is_init and model.head_dist is None and isinstance(model.head, torch.nn.Identity)
    torch.testing.assert_close(model.blocks[1].ls2.gamma, ref.blocks[1].ls2.gamma)
    assert model.pos_embed.shape == (1, 64, 384)         # resized from 4x4 to 8x8 at load time


def test_layer_ids_for_layer_decay():
    vit = ViTBackbone(arch='deit3_small_patch16_224', depth=3, img_size=64, out_indices=-1)
    assert vit.num_layers == 3
    ids = {n: vit.get_layer_id(n) for n, _ in vit.named_parameters()}
    assert ids['cls_token'] == ids['pos_embed'] == ids['patch_embed.proj.weight'] == 0
    assert ids['blocks.0.attn.qkv.weight'] == 1 and ids['blocks.2.ls2.gamma'] == 3
    assert ids['norm.weight'] == 4 and vit.get_layer_id('backbone.blocks.1.mlp.fc1.bias') == 2
    cait = create_model('cait_xxs24_224', depth=3, img_size=64)
    assert cait.num_layers == 5
    assert cait.get_layer_id('blocks_token_only.1.attn.q.weight') == 5 and cait.get_layer_id('head.bias') == 6


def _import_config_modules(cfg):
    from mmengine.utils import import_modules_from_strings
    import_modules_from_strings(**cfg.custom_imports)


def test_mmseg_upernet_builds_and_runs():
    pytest.importorskip('mmseg')
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    cfg = Config(dict(
        custom_imports=dict(imports=['backbones'], allow_failed_imports=False),
        model=dict(
            type='EncoderDecoder',
            data_preprocessor=dict(type='SegDataPreProcessor', mean=[123.675, 116.28, 103.53],
                                   std=[58.395, 57.12, 57.375], bgr_to_rgb=True, pad_val=0, seg_pad_val=255),
            backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', depth=4, img_size=64,
                          out_indices=(0, 1, 2, 3), drop_path_rate=0.1),
            neck=dict(type='MultiLevelNeck', in_channels=[384] * 4, out_channels=32, scales=[4, 2, 1, 0.5]),
            decode_head=dict(type='UPerHead', in_channels=[32] * 4, in_index=[0, 1, 2, 3], pool_scales=(1, 2, 3, 6),
                             channels=32, num_classes=5, norm_cfg=dict(type='BN', requires_grad=True),
                             loss_decode=dict(type='CrossEntropyLoss', loss_weight=1.0)),
            train_cfg=dict(), test_cfg=dict(mode='whole'))))
    _import_config_modules(cfg)
    init_default_scope('mmseg')
    from mmengine.structures import PixelData
    from mmseg.registry import MODELS as SEG_MODELS
    from mmseg.structures import SegDataSample
    model = SEG_MODELS.build(cfg.model)
    model.init_weights()
    assert isinstance(model.backbone, ViTBackbone)
    x = torch.randn(2, 3, 64, 96)
    assert model(x, mode='tensor').shape == (2, 5, 16, 24)
    samples = [SegDataSample(gt_sem_seg=PixelData(data=torch.randint(0, 5, (1, 64, 96))),
                             metainfo=dict(img_shape=(64, 96), pad_shape=(64, 96))) for _ in range(2)]
    losses = model(x, samples, mode='loss')
    losses['decode.loss_ce'].backward()
    assert model.backbone.blocks[0].attn.qkv.weight.grad is not None


def test_mmdet_mask_rcnn_builds_and_runs():
    pytest.importorskip('mmdet')
    pytest.importorskip('mmcv.ops')
    from mmengine.config import Config
    from mmengine.registry import init_default_scope
    assigner = dict(type='MaxIoUAssigner', pos_iou_thr=0.5, neg_iou_thr=0.3, min_pos_iou=0.3, match_low_quality=True)
    coder = dict(type='DeltaXYWHBBoxCoder', target_means=[0.] * 4, target_stds=[1.] * 4)
    cfg = Config(dict(
        custom_imports=dict(imports=['backbones', 'mmseg.models'], allow_failed_imports=False),
        model=dict(
            type='MaskRCNN',
            data_preprocessor=dict(type='DetDataPreprocessor', mean=[123.675, 116.28, 103.53],
                                   std=[58.395, 57.12, 57.375], bgr_to_rgb=True, pad_mask=True, pad_size_divisor=32),
            # ViTDet-style: windowed attention with global blocks; mmseg's neck rescales the stride-8 maps
            backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', depth=4, img_size=64,
                          out_indices=(0, 1, 2, 3), window_size=5, global_attn_indexes=(1, 3)),
            neck=[dict(type='mmseg.MultiLevelNeck', in_channels=[192] * 4, out_channels=32, scales=[2, 1, 0.5, 0.25]),
                  dict(type='FPN', in_channels=[32] * 4, out_channels=32, num_outs=5)],
            rpn_head=dict(type='RPNHead', in_channels=32, feat_channels=32, bbox_coder=coder,
                          anchor_generator=dict(type='AnchorGenerator', scales=[8], ratios=[0.5, 1.0, 2.0],
                                                strides=[4, 8, 16, 32, 64]),
                          loss_cls=dict(type='CrossEntropyLoss', use_sigmoid=True), loss_bbox=dict(type='L1Loss')),
            roi_head=dict(
                type='StandardRoIHead',
                bbox_roi_extractor=dict(type='SingleRoIExtractor', out_channels=32, featmap_strides=[4, 8, 16, 32],
                                        roi_layer=dict(type='RoIAlign', output_size=7, sampling_ratio=0)),
                bbox_head=dict(type='Shared2FCBBoxHead', in_channels=32, fc_out_channels=32, num_classes=3,
                               bbox_coder=coder, loss_cls=dict(type='CrossEntropyLoss'), loss_bbox=dict(type='L1Loss')),
                mask_roi_extractor=dict(type='SingleRoIExtractor', out_channels=32, featmap_strides=[4, 8, 16, 32],
                                        roi_layer=dict(type='RoIAlign', output_size=14, sampling_ratio=0)),
                mask_head=dict(type='FCNMaskHead', num_convs=1, in_channels=32, conv_out_channels=32, num_classes=3,
                               loss_mask=dict(type='CrossEntropyLoss', use_mask=True))),
            train_cfg=dict(
                rpn=dict(assigner=assigner, sampler=dict(type='RandomSampler', num=64, pos_fraction=0.5),
                         allowed_border=-1, pos_weight=-1, debug=False),
                rpn_proposal=dict(nms_pre=200, max_per_img=100, nms=dict(type='nms', iou_threshold=0.7)),
                rcnn=dict(assigner=assigner, mask_size=28, pos_weight=-1, debug=False,
                          sampler=dict(type='RandomSampler', num=32, pos_fraction=0.25, add_gt_as_proposals=True))),
            test_cfg=dict(rpn=dict(nms_pre=200, max_per_img=100, nms=dict(type='nms', iou_threshold=0.7)),
                          rcnn=dict(score_thr=0.0, nms=dict(type='nms', iou_threshold=0.5), max_per_img=10,
                                    mask_thr_binary=0.5)))))
    _import_config_modules(cfg)
    init_default_scope('mmdet')
    from mmdet.registry import MODELS as DET_MODELS
    from mmdet.testing import demo_mm_inputs
    # seeded: mmdet 3.3's RPN sampling occasionally indexes one past its anchors (IndexError in
    # AnchorHead._get_targets_single) for some random draws on these tiny inputs
    torch.manual_seed(0)
    np.random.seed(0)
    model = DET_MODELS.build(cfg.model)
    model.init_weights()
    assert isinstance(model.backbone, ViTBackbone)
    data = model.data_preprocessor(demo_mm_inputs(2, [(3, 96, 128)] * 2, num_items=[2, 3], num_classes=3,
                                                  with_mask=True), True)
    losses = model(**data, mode='loss')
    assert {'loss_rpn_cls', 'loss_cls', 'loss_mask'} <= set(losses)
    model.eval()
    with torch.no_grad():
        data = model.data_preprocessor(demo_mm_inputs(1, [(3, 96, 128)], num_classes=3, with_mask=True), False)
        (result,) = model(**data, mode='predict')
    assert result.pred_instances.masks.shape[1:] == (96, 128)
