"""ResMLP's ablation switches (thesis Table 4.3) as keys of the family: each builds the network the table
describes, checked by its parameter count against the table's column (millions, one decimal), and runs."""
import pytest
import torch

from backbones import create_model
from backbones.layers import ClassMLPBlock, ResMLPBlock


def _millions(arch: str, **kw) -> float:
    with torch.device('meta'):  # no memory, no initialisation: just the shapes
        model = create_model(arch, **kw)
    return round(sum(p.numel() for p in model.parameters()) / 1e6, 1)


@pytest.mark.parametrize('arch, overrides, params', [
    ('resmlp_12', {}, 15.4),
    ('resmlp_24', {}, 30.0),
    ('resmlp_b24', dict(patch_size=16), 115.7),
    ('resmlp_12', dict(norm='ln'), 15.4),                # Aff -> LayerNorm: the same parameters
    ('resmlp_12', dict(global_pool='class_mlp'), 17.7),  # avg -> Class-MLP
    ('resmlp_12', dict(cross_patch='none'), 14.9),
    ('resmlp_12', dict(cross_patch='mlp'), 18.6),
    ('resmlp_12', dict(cross_patch='conv3x3'), 30.8),
    ('resmlp_12', dict(cross_patch='dwconv3x3'), 14.9),
    ('resmlp_12', dict(cross_patch='dsconv3x3'), 16.7),
    ('resmlp_12', dict(patch_size=14), 15.6),
    ('resmlp_12', dict(patch_size=8), 22.1),
    ('resmlp_b24', {}, 129.1),                           # B24/8
])
def test_parameter_counts_match_table_4_3(arch, overrides, params):
    assert _millions(arch, **overrides) == params


@pytest.mark.parametrize('overrides', [dict(norm='ln'), dict(norm='bn'), dict(global_pool='class_mlp'),
                                       *[dict(cross_patch=c) for c in ('mlp', 'none', 'conv3x3', 'dwconv3x3',
                                                                       'dsconv3x3')]])
def test_switches_build_and_run(overrides):
    torch.manual_seed(0)
    model = create_model('resmlp_demo_patch8_64', depth=2, num_classes=5, **overrides)
    x = torch.randn(2, 3, 64, 64)
    out = model(x)
    assert out.shape == (2, 5) and out.isfinite().all()
    out.sum().backward()
    block = model.blocks[0]
    cross = overrides.get('cross_patch', 'linear')
    assert (cross == 'none') == (not hasattr(block, 'norm1'))
    if cross in ('conv3x3', 'dwconv3x3', 'dsconv3x3'):  # the sublayer mixes neighbouring patches only
        y = torch.randn(1, 64, 192)
        y2 = y.clone()
        y2[0, 63] += 1.  # the bottom-right patch
        with torch.no_grad():
            d = (block.mix_tokens(y2, (8, 8)) - block.mix_tokens(y, (8, 8))).abs().sum(-1)[0]
        assert d[0] == 0 and d[63] > 0 and d[54] > 0  # far patch unchanged, its 3x3 neighbour changed
    if overrides.get('norm') == 'bn':
        assert isinstance(block.norm2, torch.nn.BatchNorm1d)
    if overrides.get('global_pool') == 'class_mlp':
        assert isinstance(model.blocks_token_only[0], ClassMLPBlock) and len(model.blocks_token_only) == 2
        assert model.forward_features(x).shape == (2, 1 + 64, 192)


def test_class_mlp_leaves_the_patches_and_gathers_them_linearly():
    torch.manual_seed(0)
    blk = ClassMLPBlock(4, 3, init_values=1.)
    x, cls = torch.randn(1, 3, 4), torch.randn(1, 1, 4)
    u = torch.cat([cls, x], 1)  # Affine at init is the identity
    gathered = (blk.gather.weight[0][:, None] * u[0]).sum(0) + blk.gather.bias
    z = cls[0, 0] + gathered
    torch.testing.assert_close(blk(x, cls)[0, 0], z + blk.mlp(z))


def test_bad_switches_are_refused_naming_the_key():
    with pytest.raises(ValueError, match='cross_patch must be one of'):
        ResMLPBlock(8, 4, cross_patch='attention')
    with pytest.raises(ValueError, match='norm must be one of'):
        ResMLPBlock(8, 4, norm='group')
    with pytest.raises(ValueError, match="global_pool must be 'avg', 'class_mlp' or ''"):
        create_model('resmlp_demo_patch8_64', global_pool='token')


# PatchConvNet's architecture ablation (thesis Table 5.7), on S60: each a key of the family
@pytest.mark.parametrize('overrides', [dict(global_pool='avg'), dict(stem='linear'), dict(norm='bn'),
                                       dict(num_heads=8)])
def test_patchconvnet_table_5_7_switches(overrides):
    torch.manual_seed(0)
    model = create_model('patchconvnet_demo_64', depth=2, num_classes=5, **overrides)
    out = model(torch.randn(2, 3, 64, 64))
    assert out.shape == (2, 5) and out.isfinite().all()
    if 'stem' in overrides:  # one p x p projection of stride p instead of the 3x3 convolutions
        assert type(model.patch_embed).__name__ == 'LinearPatchStem'
        assert model.patch_embed.proj.kernel_size == (8, 8) and model.patch_embed.proj.stride == (8, 8)
    if 'num_heads' in overrides:
        assert model.blocks_token_only[0].attn.num_heads == 8
    base = _millions('patchconvnet_s60')
    assert base == 25.2  # Table 5.1
    if 'stem' in overrides:  # the linear projection has 16 * 16 * 3 * 384 + 384 weights instead of the stem's
        assert _millions('patchconvnet_s60', stem='linear') < base
    with pytest.raises(ValueError, match="stem must be 'conv' or 'linear'"):
        create_model('patchconvnet_demo_64', stem='hmlp')
