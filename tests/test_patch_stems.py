"""The patch stems "Three things" Table 7 compares (backbones/layers/stems.py) and the ViT-B12 variants built on them:
the FLOPs the table prints, the layouts of the official code, and which stems mix neighbouring patches."""
import pytest
import torch
from torch import nn

from _backbone_helpers import randomize
from backbones import create_model
from backbones.complexity import count_flops
from backbones.layers import HMLPStem, LeViTStem, PatchEmbed

# Table 7 GFLOPs of the ViT-B with each stem, against 17.58 for the linear projection
TABLE7_GFLOPS = {'three_things_b12_linear_bn_gelu': 17.58, 'three_things_b13_linear': 19.04,
                 'three_things_b12_levit_bn': 19.07, 'three_things_b12_hmlp_ln': 17.73}


def test_the_stems_cost_what_table7_prints():
    """Each stem's extra cost over the linear projection, counted on 1-block models (the blocks are the same)."""
    linear = count_flops(create_model('three_things_b12_linear', depth=1), (224, 224))
    for name, gflops in TABLE7_GFLOPS.items():
        extra = count_flops(create_model(name, depth=2 if 'b13' in name else 1), (224, 224)) - linear
        assert abs(extra / 1e9 - (gflops - 17.58)) < 0.015, name


def test_linear_stem_with_norm_and_gelu_is_projection_then_norm_then_gelu():
    stem = randomize(PatchEmbed(img_size=32, patch_size=16, embed_dim=8, norm='bn', act=True)).eval()
    x = torch.randn(2, 3, 32, 32)
    y = stem.proj(x)
    bn = stem.norm
    y = (y - bn.running_mean[:, None, None]) / (bn.running_var[:, None, None] + bn.eps).sqrt() \
        * bn.weight[:, None, None] + bn.bias[:, None, None]
    tokens, grid = stem(x)
    torch.testing.assert_close(tokens, nn.functional.gelu(y).flatten(2).transpose(1, 2))
    assert grid == (2, 2) and set(PatchEmbed().state_dict()) == {'proj.weight', 'proj.bias'}  # plain keys unchanged


def test_levit_stem_layout():
    """LeViT's b16: 3x3 stride-2 convolutions without bias to D/8, D/4, D/2, D, a norm after each, GELU between."""
    stem = LeViTStem(embed_dim=64, norm='ln')
    convs = [m for m in stem.proj if isinstance(m, nn.Conv2d)]
    assert [(c.in_channels, c.out_channels, c.kernel_size, c.stride, c.padding, c.bias) for c in convs] == \
        [(3, 8, (3, 3), (2, 2), (1, 1), None), (8, 16, (3, 3), (2, 2), (1, 1), None),
         (16, 32, (3, 3), (2, 2), (1, 1), None), (32, 64, (3, 3), (2, 2), (1, 1), None)]
    assert [type(m).__name__ for m in stem.proj][:4] == ['Conv2d', 'LayerNorm2d', 'GELU', 'Conv2d']
    assert type(stem.proj[-1]).__name__ == 'LayerNorm2d'
    tokens, grid = stem(torch.randn(1, 3, 64, 48))
    assert tokens.shape == (1, 12, 64) and grid == (4, 3)


def test_hmlp_matches_the_official_layout():
    """facebookresearch/deit models_v2.py hMLP_stem: conv 4/4, norm, GELU, conv 2/2, norm, GELU, conv 2/2, norm,
    hidden width D/4 (keys proj.{0,1,3,4,6,7})."""
    stem = HMLPStem(embed_dim=64)
    assert [k for k in stem.state_dict() if k.endswith('weight')] == \
        [f'proj.{i}.weight' for i in (0, 1, 3, 4, 6, 7)]
    assert [(m.kernel_size, m.out_channels) for m in stem.proj if isinstance(m, nn.Conv2d)] == \
        [((4, 4), 16), ((2, 2), 16), ((2, 2), 64)]


@pytest.mark.parametrize('name, mixes', [('three_things_b12_levit_bn', True), ('three_things_b12_hmlp_bn', False),
                                         ('three_things_b12_linear_bn_gelu', False)])
def test_which_stems_mix_neighbouring_patches(name, mixes):
    """Why only the hMLP stem suits masked image modelling: changing one 16x16 patch changes other tokens through
    the LeViT stem's overlapping kernels, never through hMLP's or the linear one's."""
    stem = randomize(create_model(name, depth=1, img_size=64, embed_dim=64, num_heads=2).patch_embed).eval()
    x = torch.randn(1, 3, 64, 64)
    y = x.clone()
    y[:, :, 16:32, 16:32] = torch.randn(1, 3, 16, 16)   # patch (1, 1) -> token 5
    with torch.no_grad():
        changed = ((stem(x)[0] - stem(y)[0]).abs().amax(dim=(0, 2)) > 1e-6).nonzero().flatten().tolist()
    assert (changed != [5]) is mixes and 5 in changed


def test_stem_options_are_checked_in_one_line():
    with pytest.raises(ValueError, match="stem must be one of"):
        create_model('vit_demo_patch8_64', stem='conv')
    with pytest.raises(ValueError, match="stem_act=True"):
        create_model('three_things_b12_hmlp_bn', depth=1, stem_act=True)
    with pytest.raises(ValueError, match="norm must be one of"):
        create_model('three_things_b12_linear', depth=1, stem_norm='gn')
