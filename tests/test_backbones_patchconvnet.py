"""PatchConvNet (thesis ch. 5): the published sizes, official-format files (written by a transcription of the
official model, tests/_backbone_helpers.py) load exactly and give its logits, wrong files are refused clearly,
BatchNorm trunks (Table 5.8), layer ids, the dense backbone (the trunk's last map at every pyramid level) and
the UperNet / Mask R-CNN configs, and ``--backbone patchconvnet_demo_64`` in the demo configs."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

import downstream  # noqa: F401  (registers the seg / det glue and the --backbone adapters)
from _backbone_helpers import materialize, official_patchconvnet, randomize, resmlp_official, timm_resmlp
from backbones import CheckpointError, PatchConvNetBackbone, create_model, load_checkpoint, save_checkpoint
from backbones.complexity import count_flops, count_params
from downstream.backbone_swap import swap_backbone
from test_det_train import coco_root, on_tiny_coco, train  # noqa: F401  (the tiny demo COCO fixture)
from test_seg_train import one_iteration_cfg, tiny_ade  # noqa: F401  (the tiny demo ADE20k fixture)
from harness.experiment.cli import build_runner

REPO = Path(__file__).resolve().parents[1]
# thesis Table 5.1: parameters (M), GFLOPs at 224
TABLE_5_1 = {'patchconvnet_s60': (25.2, 4.0), 'patchconvnet_s120': (47.7, 7.5),
             'patchconvnet_b60': (99.4, 15.8), 'patchconvnet_b120': (188.6, 29.9)}


def _params(name, **overrides):
    with torch.device('meta'):
        return count_params(create_model(name, **overrides))


@pytest.mark.parametrize('name', TABLE_5_1)
def test_parameter_counts_match_table_5_1(name):
    assert abs(_params(name) / 1e6 - TABLE_5_1[name][0]) <= 0.05


@pytest.mark.parametrize('name', ['patchconvnet_s60', 'patchconvnet_s120'])
def test_flops_match_table_5_1(name):
    assert abs(count_flops(materialize(create_model, name)) / 1e9 - TABLE_5_1[name][1]) <= 0.05


def _save(obj, tmp_path, name='weights.pth'):
    path = tmp_path / name
    torch.save(obj, path)
    return str(path)


def _load(name, path, **overrides):
    model = materialize(create_model, name, **overrides)  # uninitialised: the loader must fill every tensor
    return model.eval(), load_checkpoint(model, path, verbose=False)


@pytest.mark.parametrize('name,dim,depth,ddp', [('patchconvnet_s60', 384, 2, False), ('patchconvnet_b60', 768, 2, True),
                                                ('patchconvnet_s60', 384, 60, False)])
def test_official_files_load_exactly_and_give_the_official_logits(name, dim, depth, ddp, tmp_path):
    """{'model': state dict} as the official release (with 'module.' when saved from DDP): stem, trunk blocks
    (attn.qkv_pos.{0,2,4,5}, gamma_1) and pooling renamed, every tensor filled, the same logits."""
    ref = official_patchconvnet(dim, depth)
    sd = {('module.' if ddp else '') + k: v for k, v in ref.state_dict().items()}
    ours, report = _load(name, _save({'model': sd}, tmp_path), depth=depth)
    assert report.source == 'facebookresearch/deit PatchConvNet' and report.notes == []
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-5)


def test_a_wrong_file_is_refused_with_the_missing_and_unexpected_keys(tmp_path):
    deeper = _save({'model': official_patchconvnet(384, 3).state_dict()}, tmp_path, 'deeper.pth')
    with pytest.raises(CheckpointError) as e:
        _load('patchconvnet_s60', deeper, depth=2)
    message = str(e.value)
    assert 'unexpected in the checkpoint' in message and 'blocks.2.conv1.weight' in message
    assert 'the checkpoint has 3 blocks, the model 2' in message
    resmlp = _save(resmlp_official(timm_resmlp(384, depth=2).state_dict()), tmp_path, 'resmlp.pth')
    with pytest.raises(CheckpointError) as e:
        _load('patchconvnet_s60', resmlp, depth=2)
    message = str(e.value)
    assert '(format: facebookresearch/deit ResMLP)' in message and 'missing from the checkpoint' in message
    assert 'blocks.0.dwconv.weight' in message and 'blocks.0.linear_tokens.weight' in message


def test_batchnorm_trunk_trains_and_round_trips(tmp_path):
    """Table 5.8's BatchNorm variant: BN in the trunk blocks only (the pooling stage keeps LayerNorm)."""
    model = create_model('patchconvnet_demo_64', num_classes=5, depth=2, norm='bn')
    assert type(model.blocks[0].norm1).__name__ == 'BatchNorm2d'
    assert type(model.blocks_token_only[0].norm1).__name__ == 'LayerNorm'
    model(torch.randn(4, 3, 64, 64)).sum().backward()  # training: batch statistics
    assert model.blocks[0].norm1.running_mean.abs().sum() > 0 and model.blocks[0].conv1.weight.grad is not None
    path = save_checkpoint(str(tmp_path / 'backbone.pth'), model.eval(), overrides=dict(depth=2, norm='bn'))
    again = create_model('patchconvnet_demo_64', num_classes=5, checkpoint=path, depth=2, norm='bn').eval()
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(again(x), model(x), rtol=0, atol=0)


def test_layer_ids_put_the_class_token_with_the_pooling():
    model = create_model('patchconvnet_s60', depth=3, img_size=64)
    assert model.num_layers == 4 and model.no_weight_decay() == {'cls_token'}
    ids = {n: model.get_layer_id(n) for n, _ in model.named_parameters()}
    assert ids['patch_embed.proj.0.weight'] == ids['patch_embed.proj.6.weight'] == 0
    assert ids['blocks.0.conv1.weight'] == 1 and ids['blocks.2.ls1.gamma'] == ids['blocks.2.se.fc2.bias'] == 3
    assert ids['cls_token'] == ids['blocks_token_only.0.attn.q.weight'] == 4
    assert ids['norm.weight'] == ids['head.bias'] == 5
    assert PatchConvNetBackbone(arch='patchconvnet_s60', depth=3).get_layer_id('backbone.blocks.1.dwconv.bias') == 2


def test_dense_backbone_gives_the_trunk_map_at_every_level(tmp_path):
    classifier = randomize(create_model('patchconvnet_demo_64', depth=3)).eval()
    path = save_checkpoint(str(tmp_path / 'backbone.pth'), classifier)
    dense = PatchConvNetBackbone(arch='patchconvnet_demo_64', depth=3, out_indices=[2, 2, 2, 2], final_norm=True,
                                 init_cfg=dict(type='Pretrained', checkpoint=path))
    dense.init_weights()  # the classifier's pooling stage and head are dropped (the dense model lacks them)
    assert not hasattr(dense, 'head') or isinstance(dense.head, torch.nn.Identity)
    assert dense.cls_token is None and dense.blocks_token_only is None
    x = torch.randn(2, 3, 64, 96)
    with torch.no_grad():
        maps = dense.eval()(x)
        tokens = classifier.forward_features(x)[:, 1:]  # [class token, patch tokens], final norm applied
    assert len(maps) == 4 and all(m is maps[0] for m in maps) and maps[0].shape == (2, 192, 8, 12)
    torch.testing.assert_close(maps[0].flatten(2).transpose(1, 2), tokens, rtol=1e-5, atol=1e-5)
    (attn,) = classifier.forward_attention(x)
    assert attn.shape == (2, 1, 1, 96) and bool((attn.sum(-1) < 1).all())  # the class token takes its share


def _build(cfg, scope):
    from mmengine.utils import import_modules_from_strings
    import_modules_from_strings(**cfg.custom_imports)
    registry = __import__(f'{scope}.registry', fromlist=['MODELS']).MODELS
    with DefaultScope.overwrite_default_scope(scope):
        return registry.build(cfg.model)


def _pooling_and_head(arch):
    """What Table 5.3 counts beyond our UperNet: the classifier's attention-based pooling, final norm, head."""
    return _params(arch) - _params(arch, num_classes=0, global_pool='', depth_token_only=0, final_norm=False)


@pytest.mark.parametrize('config,arch,published', [
    ('upernet_patchconvnet_s60', 'patchconvnet_s60', 57.1), ('upernet_patchconvnet_b120', 'patchconvnet_b120', 229.8),
    ('upernet_patchconvnet_s60', 'patchconvnet_b60', 140.6), ('upernet_patchconvnet_s60', 'patchconvnet_l120', 383.7)])
def test_upernet_matches_table_5_3(config, arch, published):
    """The configs (and --backbone to B60 / L120) have Table 5.3's sizes once the classifier's pooling stage
    and head, which the table counts and a dense model does not build, are added."""
    cfg = Config.fromfile(REPO / 'configs' / f'{config}.py')
    if arch != cfg.experiment.backbone:
        swap_backbone(cfg, arch)
    with torch.device('meta'):
        model = _build(cfg, 'mmseg')
    assert model.backbone.out_indices == [model.backbone.depth - 1] * 4 and model.decode_head.channels == 512
    total = (count_params(model) + _pooling_and_head(arch)) / 1e6
    assert abs(total - published) <= 0.05
    feats = model.eval().extract_feat(torch.empty(1, 3, 64, 64, device='meta'))
    assert [f.shape[-1] for f in feats] == [16, 8, 4, 2] and {f.shape[1] for f in feats} == {model.backbone.embed_dim}


def test_mask_rcnn_config_uses_the_trunk_output_and_the_3x_schedule():
    cfg = Config.fromfile(REPO / 'configs/maskrcnn_patchconvnet_s60.py')
    assert cfg.train_cfg.max_iters == 265500 == 36 * 118000 // 16 and cfg.train_dataloader.batch_size * 8 == 16
    # no layer-wise decay: mmengine's own constructor with XCiT's keys (tests/protocol_audit/detection.yaml)
    assert 'constructor' not in cfg.optim_wrapper and 'layer_decay_rate' not in cfg.optim_wrapper.paramwise_cfg
    model = _build(cfg, 'mmdet').eval()
    assert model.backbone.out_indices == [59] and model.neck.in_channels == 384
    with torch.no_grad():
        feats = model.extract_feat(torch.randn(1, 3, 128, 160))
    assert [tuple(f.shape[-2:]) for f in feats] == [(32, 40), (16, 20), (8, 10), (4, 5), (2, 3)]


def test_swap_into_the_demo_upernet_trains_two_iterations(tiny_ade, tmp_path):  # noqa: F811
    cfg = one_iteration_cfg(tiny_ade, tmp_path, backbone='patchconvnet_demo_64')
    assert cfg.model.backbone.type == 'vitbench.PatchConvNet' and cfg.model.backbone.out_indices == [11] * 4
    cfg.train_cfg.max_iters = cfg.train_cfg.val_interval = 2
    runner = build_runner(cfg)
    runner.train()
    assert type(runner.model.backbone).__name__ == 'PatchConvNetBackbone'
    assert runner.message_hub.get_scalar('val/mIoU') is not None and (tmp_path / 'iter_2.pth').is_file()


@pytest.mark.filterwarnings('ignore:__array__ implementation:DeprecationWarning')
def test_swap_into_the_demo_mask_rcnn_trains_two_iterations(coco_root, tmp_path):  # noqa: F811
    record = train(tmp_path, '--backbone', 'patchconvnet_demo_64', '--cfg-options', *on_tiny_coco(coco_root),
                   'experiment_name=det_patchconvnet', 'model.backbone.depth=3',
                   'train_cfg.max_iters=2', 'train_cfg.val_interval=2', 'default_hooks.checkpoint=None',
                   'param_scheduler.0.end=1', 'param_scheduler.1.end=2', 'param_scheduler.1.milestones=[1]',
                   'model.test_cfg.rcnn.score_thr=0.0', 'model.test_cfg.rcnn.max_per_img=10')
    assert (record['task'], record['backbone']) == ('det', 'patchconvnet_demo_64')
    assert {'bbox_mAP', 'segm_mAP'} <= set(record['metrics']) and record['metrics']['loss'] > 0


def test_swap_into_the_demo_transfer_builds_the_classifier():
    from vitbench.registry import MODELS
    cfg = Config.fromfile(REPO / 'configs/demo/transfer_cifar10_demo.py')
    swap_backbone(cfg, 'patchconvnet_demo_64')
    with DefaultScope.overwrite_default_scope('vitbench'):
        model = MODELS.build(cfg.model)
    assert type(model.backbone).__name__ == 'PatchConvNet' and model.backbone.head.out_features == 10
    assert model(torch.randn(2, 3, 32, 32)).shape == (2, 10)  # 32x32: a 4x4 trunk map
