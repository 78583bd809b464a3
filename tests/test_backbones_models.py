"""Named variants: equal to timm's same architecture, parameter counts and FLOPs of the papers' tables."""
import pytest
import timm
import torch

from _backbone_helpers import materialize, small_size, timm_model
from backbones import create_model, list_models, load_checkpoint
from backbones.complexity import count_flops, count_params

TIMM_FAMILIES = [n for n in list_models() if n.startswith(('deit', 'cait', 'vit_'))]


def _load_from_timm(name, tmp_path, **kwargs):
    """timm's model and ours loaded from its state dict file (ours built uninitialised: the loader must
    fill every tensor, or it raises)."""
    ref = timm_model(name, **kwargs)
    path = tmp_path / 'timm.pth'
    torch.save(ref.state_dict(), path)
    ours = materialize(create_model, name, **kwargs)
    load_checkpoint(ours, str(path))
    return ref, ours.eval()


@pytest.mark.parametrize('name', TIMM_FAMILIES)
def test_logits_equal_timm(name, tmp_path):
    """timm's weights load without renaming and give the same logits (2 blocks, small input)."""
    size = small_size(name)
    ref, ours = _load_from_timm(name, tmp_path, depth=2, img_size=size)
    x = torch.randn(2, 3, size, size)
    with torch.no_grad():
        expected, got = ref(x), ours(x)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('name,size', [('deit_tiny_distilled_patch16_224', 224), ('deit3_small_patch16_224', 112),
                                       ('cait_xxs24_224', 112)])
def test_full_depth_equal_timm(name, size, tmp_path):
    """Every block: deeper nets accumulate more rounding, still within 1e-5."""
    ref, ours = _load_from_timm(name, tmp_path, img_size=size)
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-5, atol=1e-5)


def _params(name, **overrides):
    with torch.device('meta'):
        return count_params(create_model(name, **overrides)) / 1e6


# (variant, overrides, parameters in M as printed in the paper, where)
PAPER_PARAMS = [
    ('deit_tiny_patch16_224', {}, 5.7, 'three-things Table 1 (ViT-Ti)'),
    ('deit_small_patch16_224', {}, 22.1, 'three-things Table 1 (ViT-S)'),
    ('deit_base_patch16_224', {}, 86.6, 'three-things Table 1 (ViT-B)'),
    ('deit3_small_patch16_224', {}, 22.1, 'three-things Table 1 (ViT-S, 400 ep + LS)'),
    ('deit3_base_patch16_224', {}, 86.6, 'DeiT III Table 6.14'),
    ('deit3_large_patch16_224', {}, 304.4, 'DeiT III Table 6.14'),
    ('deit3_huge_patch14_224', {}, 632.1, 'DeiT III Table 6.14'),
    ('deit3_base_patch16_36', {}, 256.7, 'three-things Table 3 (B36x1, LS)'),
    ('deit3_base_patch16_18x2', {}, 256.7, 'three-things Table 3 (B18x2, LS)'),
    ('deit3_small_patch16_36', dict(depth=48, init_values=None), 85.9, 'three-things Table 3 (S48x1)'),
    ('deit3_small_patch16_18x2', dict(depth=24, init_values=None), 85.9, 'three-things Table 3 (S24x2)'),
    ('vit_tiny12h_patch16_224', {}, 5.7, 'MAE-lite §2 (ViT-Tiny, 12 heads)'),
    ('cait_xxs24_224', {}, 12.0, 'CaiT Table 3'),
    ('cait_xxs36_224', {}, 17.3, 'CaiT Table 3'),
    ('cait_xs24_224', {}, 26.6, 'CaiT Table 3'),
    ('cait_s24_224', {}, 46.9, 'CaiT Table 3'),
    ('cait_s36_224', {}, 68.2, 'CaiT Table 3'),
    ('cait_m36_384', dict(img_size=224), 270.9, 'CaiT Table 3 (counted at 224)'),
    ('cait_xs36_224', {}, 38.6, 'CaiT Table 3'),
    ('cait_s48_224', {}, 89.5, 'CaiT Table 3'),
    ('cait_m24_224', {}, 185.9, 'CaiT Table 3'),
    ('cait_m36_224', {}, 270.9, 'CaiT Table 3'),
    ('cait_m48_224', {}, 356.0, 'thesis Table 3.17 (356M)'),
]


@pytest.mark.parametrize('name,overrides,paper,where', PAPER_PARAMS)
def test_param_count_matches_paper(name, overrides, paper, where):
    assert abs(_params(name, **overrides) - paper) <= 0.05, where


@pytest.mark.parametrize('name', ['deit3_huge_patch14_52', 'deit3_huge_patch14_26x2'])
def test_one_billion_parameter_vit_h_counts_as_timms_and_the_thesis(name):
    """Thesis Table 6.6's ViT-H-52 and ViT-H-26x2 (§6.3.2.3: "1B parameters"), built on the meta device: as many
    tensors of the same shapes as timm's DeiT III ViT-H made 52 blocks deep, or its parallel ViT at ViT-H's sizes
    (26 layers of 2 branches, each with its own norms and LayerScale); 52 blocks of 12·1280² weights ≈ 1.03e9."""
    from _backbone_helpers import TIMM_EQUIVALENT
    timm_name, extra = TIMM_EQUIVALENT[name]
    with torch.device('meta'):
        ours, ref = create_model(name), timm.create_model(timm_name, pretrained=False, **extra)
    assert {k: v.shape for k, v in ours.state_dict().items()} == {k: v.shape for k, v in ref.state_dict().items()}
    assert round(count_params(ours) / 1e9, 1) == 1.0 and count_params(ours) == count_params(ref)


def test_cait_b12_is_table_6_13s_count_without_its_classifier_and_its_flops():
    """Thesis Table 6.13's CaiT-B12: 100.0M parameters, which is the model without its 1000-class classifier
    (0.77M; with it, 100.77M), and 18.2 GFLOPs, which 16 heads of 48 channels give (CaiT's d = 48 x heads; 12
    heads would give 18.1)."""
    with torch.device('meta'):
        model = create_model('cait_b12_224')
    trunk = sum(p.numel() for n, p in model.named_parameters() if not n.startswith('head.'))
    assert abs(trunk / 1e6 - 100.0) <= 0.05 and abs(count_params(model) / 1e6 - 100.77) <= 0.01
    assert len(model.blocks) == 12 and len(model.blocks_token_only) == 2 and model.blocks[0].attn.num_heads == 16
    assert round(count_flops(materialize(create_model, 'cait_b12_224')) / 1e9, 1) == 18.2


@pytest.mark.parametrize('name,paper', [('deit_tiny_distilled_patch16_224', 6),
                                        ('deit_small_distilled_patch16_224', 22),
                                        ('deit_base_distilled_patch16_224', 87)])
def test_distilled_param_count(name, paper):
    """DeiT Table 3.5 gives whole millions for the distilled models (5.9 / 22.4 / 87.3)."""
    assert round(_params(name)) == paper


def test_options_keep_parameter_count():
    """12 heads instead of 3, parallel vs sequential: same parameters (MAE-lite §2, three-things Eq. 2)."""
    assert _params('vit_tiny12h_patch16_224') == _params('deit_tiny_patch16_224')
    assert _params('deit3_small_patch16_18x2') == _params('deit3_small_patch16_36')
    assert _params('deit3_small_patch16_224', num_parallel=3, depth=4) == _params('deit3_small_patch16_224')


def test_flops_match_three_things_table7():
    """ViT-B: 17.58 GFLOPs with the linear stem, 17.73 with the hMLP stem (Table 7)."""
    # FLOPs do not depend on the weights: skip the random init
    assert round(count_flops(materialize(create_model, 'deit_base_patch16_224')) / 1e9, 2) == 17.58
    assert round(count_flops(materialize(create_model, 'deit_base_patch16_224', stem='hmlp')) / 1e9, 2) == 17.73


def test_parallel_flops_equal_sequential():
    seq = create_model('deit3_small_patch16_36', depth=4, img_size=64)
    par = create_model('deit3_small_patch16_18x2', depth=2, img_size=64)
    assert count_flops(seq, 64) == count_flops(par, 64)


def test_unknown_name_lists_close_names():
    with pytest.raises(KeyError, match='deit3_small_patch16_224') as e:
        create_model('deit3_smal_patch16_224')
    assert 'valid names' in str(e.value)


def test_unknown_override_is_an_error():
    with pytest.raises(TypeError, match='num_head'):
        create_model('deit_tiny_patch16_224', num_head=4)


def test_demo_variant_is_small_and_fast():
    model = create_model('vit_demo_patch8_64', num_classes=10)
    assert count_params(model) < 3.5e6
    assert model(torch.randn(2, 3, 64, 64)).shape == (2, 10)


def test_cait_b12_swaps_into_the_deit3_vit_b_recipe_as_table_6_13s_row_runs_it():
    """The map's CaiT-B12 row runs configs/pretrain/deit3_base_in1k_400e.py with --backbone cait_b12_224: the run
    builds a CaiT (meta device) with the recipe's drop path 0.1 and records the variant the row links by."""
    import argparse
    from mmengine.registry import MODELS, DefaultScope
    from harness.experiment.cli import load_config
    import pretrain  # noqa: F401  (registers the recipe's classifier)
    args = argparse.Namespace(config='configs/pretrain/deit3_base_in1k_400e.py', work_dir=None, cfg_options={},
                              backbone='cait_b12_224', backbone_checkpoint=None, launcher='none', local_rank=0)
    cfg = load_config(args)
    with DefaultScope.overwrite_default_scope('vitbench'), torch.device('meta'):
        model = MODELS.build(cfg.model)
    assert type(model.backbone).__name__ == 'CaiT' and len(model.backbone.blocks_token_only) == 2
    assert model.backbone.blocks[-1].drop_path1.drop_prob == 0.1 and cfg.experiment.backbone == 'cait_b12_224'
