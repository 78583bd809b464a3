"""The per-block ratio of residual-branch norm to main-path norm (CaiT Figure 4; backbones/residual_norms.py,
``tools/analyze.py residual``) on a ViT whose ratios are known by construction: every token enters as the same
vector v, every branch adds a constant vector, so each ratio is a quotient of norms computed by hand."""
import pytest
import torch

from backbones import create_model
from backbones.residual_norms import residual_ratios


def constant_vit(scale):
    model = create_model('vit_demo_patch8_64', img_size=16, patch_size=8, embed_dim=8, depth=3, num_heads=2,
                         num_classes=0, residual_scale='scalar', init_values=scale)
    v = torch.arange(1., 9.)
    with torch.no_grad():
        model.patch_embed.proj.weight.zero_()
        model.patch_embed.proj.bias.zero_()
        model.cls_token.zero_()
        model.pos_embed.copy_(v.expand_as(model.pos_embed))  # every token starts as v
        for i, blk in enumerate(model.blocks):  # branches ignore their input: attention adds a, the FFN b
            for layer, c in ((blk.attn.proj, torch.full((8,), float(i + 1))), (blk.mlp.fc2, -torch.ones(8))):
                layer.weight.zero_()
                layer.bias.copy_(c)
    return model, v


@pytest.mark.parametrize('scale', [1.0, 0.1])
def test_ratios_known_by_construction(scale):
    model, x = constant_vit(scale)
    attn, ffn = [], []
    for i in range(3):
        a, b = scale * torch.full((8,), float(i + 1)), -scale * torch.ones(8)
        attn.append((a.norm() / x.norm()).item())
        x = x + a
        ffn.append((b.norm() / x.norm()).item())
        x = x + b
    ratios = residual_ratios(model, torch.randn(2, 3, 16, 16))
    assert ratios['attn'] == pytest.approx(attn, rel=1e-5) and ratios['ffn'] == pytest.approx(ffn, rel=1e-5)


def test_the_analysis_reads_the_late_class_token_blocks_and_refuses_other_blocks():
    model = create_model('vit_demo_patch8_64', img_size=16, depth=2, cls_insert_layer=1, num_classes=0)
    assert len(residual_ratios(model, torch.randn(1, 3, 16, 16))['attn']) == 2
    parallel = create_model('vit_demo_patch8_64', img_size=16, depth=2, num_parallel=2, num_classes=0)
    with pytest.raises(ValueError, match="ParallelBlock has neither 'ls1' nor 'attn'"):
        residual_ratios(parallel, torch.randn(1, 3, 16, 16))
