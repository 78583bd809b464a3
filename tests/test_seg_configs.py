"""The UperNet configs build with the thesis' parameter counts, neck and head widths follow the backbone
(also after --backbone), layer decay scales each backbone layer, and a wrong data_root shows the layout."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope
from mmseg.registry import DATASETS, MODELS

import downstream  # noqa: F401  (registers the seg glue and the --backbone adapter)
from backbones.factory import variant_kwargs
from downstream.seg import head_channels, pyramid_indices
from downstream.backbone_swap import swap_backbone

CONFIGS = Path(__file__).resolve().parents[1] / 'configs'
# config -> (backbone, UperNet parameters in millions, thesis Table 6.12; None: not in the thesis)
EXPERIMENTS = {
    'upernet_deit3_b': ('deit3_base_patch16_224', 127.7),
    'upernet_deit3_s': ('deit3_small_patch16_224', 41.7),
    'upernet_deit3_l': ('deit3_large_patch16_224', 353.6),
    # DeiT III ViT-T's 10.9 M (12 heads add no weights) + BEiT's relative position bias tables of
    # upernet_beit160k: 12 blocks x ((2 * 32 - 1) ** 2 + 3) x 12 heads = 0.57 M
    'upernet_vit_tiny12h_mae': ('vit_tiny12h_patch16_224', 10.88 + 0.572),
    'upernet_vit_tiny12h_dmae': ('vit_tiny12h_patch16_224', 10.88 + 0.572),
    'upernet_cait_s24': ('cait_s24_224', None),
    'demo/upernet_demo': ('vit_demo_patch8_64', None),
}


def load(name: str) -> Config:
    return Config.fromfile(CONFIGS / f'{name}.py')


def in_mmseg():
    """mmseg's default scope, as the configs set it, without leaking it to other tests."""
    return DefaultScope.overwrite_default_scope('mmseg')


def build_on_meta(cfg: Config):
    """The model without memory or initialisation cost (shapes only)."""
    with in_mmseg(), torch.device('meta'):
        return MODELS.build(cfg.model)


def assert_consistent(cfg: Config, arch: str, channels=None):
    variant = variant_kwargs(arch)
    dim, model = variant['embed_dim'], cfg.model
    assert model.backbone.arch == cfg.experiment.backbone == arch
    family = 'vitbench.CaiT' if arch.startswith('cait') else 'vitbench.VisionTransformer'
    assert model.backbone.type == family
    assert list(model.backbone.out_indices) == pyramid_indices(variant['depth'])
    assert model.neck.embed_dim == dim and model.auxiliary_head.in_channels == dim
    assert list(model.decode_head.in_channels) == [dim] * 4
    assert model.decode_head.channels == (channels or head_channels(dim))


@pytest.mark.parametrize('name', EXPERIMENTS)
def test_config_builds_with_widths_that_follow_its_backbone(name):
    cfg = load(name)
    arch, _ = EXPERIMENTS[name]
    assert_consistent(cfg, arch, channels=64 if name.startswith('demo/') else None)
    assert cfg.experiment.task == 'seg' and cfg.experiment.dataset.startswith('ade20k')
    build_on_meta(cfg)


@pytest.mark.parametrize('name', [n for n, (_, count) in EXPERIMENTS.items() if count])
def test_parameter_count_matches_the_thesis(name):
    model = build_on_meta(load(name))
    assert sum(p.numel() for p in model.parameters()) / 1e6 == pytest.approx(EXPERIMENTS[name][1], abs=0.05)


def test_protocol_of_the_canonical_config():
    """The thesis' UperNet (§6.3.5.2: XCiT's repository): xcit's upernet_xcit_small_12_p16_160k_ade20k.py values."""
    cfg = load('upernet_deit3_b')
    assert cfg.experiment.protocol.name == 'upernet_xcit160k'
    assert cfg.train_cfg.max_iters == 160000 and cfg.model.data_preprocessor.size == (512, 512)
    assert cfg.train_dataloader.batch_size * 8 == 16  # per GPU, 8 GPUs
    assert cfg.optim_wrapper.optimizer == dict(type='AdamW', lr=6e-5, betas=(0.9, 0.999), weight_decay=0.01)
    assert 'constructor' not in cfg.optim_wrapper  # mmengine's default: no layer-wise decay
    assert [(s['type'], s['begin'], s['end']) for s in cfg.param_scheduler] == [('LinearLR', 0, 1500),
                                                                              ('PolyLR', 1500, 160000)]
    assert cfg.param_scheduler[0]['start_factor'] == 1e-6 and cfg.param_scheduler[1]['eta_min'] == 0.0
    assert cfg.param_scheduler[1]['power'] == 1.0
    assert cfg.model.test_cfg == dict(mode='whole')
    assert (cfg.model.decode_head.channels, load('upernet_deit3_s').model.decode_head.channels) == (512, 384)
    assert cfg.model.backbone.init_cfg == dict(type='Pretrained', checkpoint=cfg.checkpoint)
    assert cfg.checkpoint == 'work_dirs/deit3_base_in1k_400e/backbone.pth'
    assert cfg.train_dataloader.dataset.data_root == 'data/ade/ADEChallengeData2016'
    assert 'TestTimeAug' in str(cfg.tta_pipeline) and cfg.tta_model.type == 'SegTTAModel'


def test_xcit_protocol_decays_all_but_position_embeddings_and_norms():
    """XCiT's custom_keys, as mmengine's default constructor applies them: weight decay 0.01 on weights, biases
    and LayerScale; none on the position embedding and every norm."""
    cfg = load('demo/upernet_demo')  # the demo's small ViT, with the protocol's optimiser
    cfg.optim_wrapper = load('upernet_deit3_b').optim_wrapper
    with in_mmseg():
        model = MODELS.build(cfg.model)
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    decay = {}
    for group in wrapper.optimizer.param_groups:
        for param in group['params']:
            decay[id(param)] = group['weight_decay']
    names = dict(model.named_parameters())
    assert decay[id(names['backbone.pos_embed'])] == 0.0
    assert decay[id(names['backbone.blocks.0.norm1.weight'])] == decay[id(names['backbone.blocks.0.norm1.bias'])] == 0
    assert decay[id(names['backbone.blocks.0.attn.qkv.bias'])] == 0.01
    assert decay[id(names['backbone.blocks.0.mlp.fc1.weight'])] == 0.01
    assert {g['lr'] for g in wrapper.optimizer.param_groups} == {6e-5}  # no layer-wise decay


def test_beit_protocol_decays_position_embedding_and_class_token_as_the_official_code():
    """BEiT / mmseg's MAE: 1-D parameters and biases without weight decay; pos_embed and cls_token decayed (both
    constructors' exemption compares the unprefixed names with 'backbone.'-prefixed ones and never matches)."""
    cfg = load('demo/upernet_demo')
    cfg.optim_wrapper = load('upernet_vit_tiny12h_mae').optim_wrapper
    with in_mmseg():
        model = MODELS.build(cfg.model)
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    decay = {id(p): g['weight_decay'] for g in wrapper.optimizer.param_groups for p in g['params']}
    names = dict(model.named_parameters())
    for name in ('backbone.blocks.0.attn.qkv.bias', 'backbone.blocks.0.norm1.weight'):
        assert decay[id(names[name])] == 0.0, name
    for name in ('backbone.pos_embed', 'backbone.cls_token', 'backbone.blocks.0.mlp.fc1.weight'):
        assert decay[id(names[name])] == 0.05, name


@pytest.mark.parametrize('arch', ['deit3_small_patch16_224', 'cait_xxs24_224', 'vit_tiny12h_patch16_224',
                                  'deit3_large_patch16_224'])
def test_backbone_swap_keeps_widths_consistent(arch):
    cfg = load('upernet_deit3_b')
    swap_backbone(cfg, arch)
    assert_consistent(cfg, arch)
    model = build_on_meta(cfg).eval()  # eval: batch statistics of a 1x1 pooled map are undefined
    feats = model.extract_feat(torch.empty(1, 3, 64, 64, device='meta'))
    assert [f.shape[1] for f in feats] == [variant_kwargs(arch)['embed_dim']] * 4
    assert model.decode_head(feats).shape[:2] == (1, 150)


def test_backbone_swap_refuses_what_cannot_work():
    with pytest.raises(KeyError, match='deit3_small_patch16_224'):  # unknown names list the valid ones
        swap_backbone(load('upernet_deit3_b'), 'deit3_smal_patch16_224')
    with pytest.raises(ValueError, match='multiple of 14'):
        swap_backbone(load('upernet_deit3_b'), 'deit3_huge_patch14_224')


def test_pyramid_indices():
    assert pyramid_indices(12) == [3, 5, 7, 11]  # BEiT / MAE / XCiT ViT-B
    assert pyramid_indices(24) == [7, 11, 15, 23]  # BEiT ViT-L
    with pytest.raises(ValueError, match='depth 3'):
        pyramid_indices(3)


def test_layer_decay_scales_each_backbone_layer_and_not_the_heads():
    cfg = load('demo/upernet_demo')
    with in_mmseg():
        model = MODELS.build(cfg.model)
    cfg.optim_wrapper.paramwise_cfg.layer_decay_rate = 0.5
    wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    lr = cfg.optim_wrapper.optimizer.lr
    top = model.backbone.num_layers + 1  # 6 blocks: embeddings 0, blocks 1..6
    lr_of = {n: g['lr'] for g in wrapper.optimizer.param_groups for n in g['param_names']}
    wd_of = {n: g['weight_decay'] for g in wrapper.optimizer.param_groups for n in g['param_names']}
    assert lr_of['backbone.patch_embed.proj.weight'] == pytest.approx(lr * 0.5 ** top)
    assert lr_of['backbone.pos_embed'] == pytest.approx(lr * 0.5 ** top)
    for i in range(model.backbone.num_layers):
        assert lr_of[f'backbone.blocks.{i}.attn.qkv.weight'] == pytest.approx(lr * 0.5 ** (top - 1 - i))
    heads = [n for n in lr_of if n.startswith(('neck.', 'decode_head.', 'auxiliary_head.'))]
    assert heads and all(lr_of[n] == lr for n in heads)
    assert wd_of['decode_head.fpn_bottleneck.conv.weight'] == 0.05 and wd_of['decode_head.conv_seg.bias'] == 0
    assert len(lr_of) == sum(1 for p in model.parameters() if p.requires_grad)


def test_a_wrong_data_root_shows_the_expected_layout(tmp_path):
    dataset = load('upernet_deit3_b').train_dataloader.dataset
    with in_mmseg(), pytest.raises(FileNotFoundError) as error:
        DATASETS.build(dict(dataset, data_root=str(tmp_path / 'ade')))
    message = str(error.value)
    assert f"data_root='{tmp_path / 'ade'}'" in message
    assert f"no folder {tmp_path / 'ade' / 'images' / 'training'}" in message
    for part in ('images/validation/ADE_val_00000001.jpg', 'annotations/training/ADE_train_00000001.png',
                 '1..150', 'make_demo_data.py'):
        assert part in message
    for folder in ('images/training', 'annotations/training'):
        (tmp_path / 'ade' / folder).mkdir(parents=True)
    with in_mmseg(), pytest.raises(FileNotFoundError, match='no .jpg images in .*images/training'):
        DATASETS.build(dict(dataset, data_root=str(tmp_path / 'ade')))
