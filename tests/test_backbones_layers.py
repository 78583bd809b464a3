"""Layers: attention maps on request, hMLP patch independence, parallel blocks, stochastic depth, heads."""
import pytest
import torch
from torch import nn

from _backbone_helpers import randomize
from backbones import create_model
from backbones.layers import Attention, Block, HMLPStem, ParallelBlock, drop_path_rates
from backbones.layers.cait_attention import mix_heads


def test_attention_maps_on_request_match_the_fused_path():
    attn = randomize(Attention(64, num_heads=4)).eval()
    x = torch.randn(2, 10, 64)
    fused = attn(x)
    out, logits = attn(x, return_attn='logits')
    out2, probs = attn(x, return_attn='probs')
    torch.testing.assert_close(out, fused, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(out2, fused, rtol=1e-5, atol=1e-6)
    q, k, _ = attn.split_heads(x)
    torch.testing.assert_close(logits, q @ k.transpose(-2, -1) * 16 ** -0.5)  # pre-softmax scaled logits
    torch.testing.assert_close(probs, logits.softmax(-1))
    with pytest.raises(ValueError, match='logits'):
        attn(x, return_attn='weights')


@pytest.mark.parametrize('name,heads', [('deit3_small_patch16_224', 6), ('deit3_small_patch16_18x2', 12),
                                        ('cait_xxs24_224', 4)])
def test_forward_attention(name, heads):
    model = create_model(name, depth=3, img_size=64)
    maps = model.forward_attention(torch.randn(2, 3, 64, 64), indices=(0, -1))
    tokens = 16 + model.num_prefix_tokens
    assert [m.shape for m in maps] == [(2, heads, tokens, tokens)] * 2   # parallel: heads of both branches
    if not name.startswith('cait'):  # talking heads mix the maps after the softmax
        torch.testing.assert_close(maps[0].sum(-1), torch.ones(2, heads, tokens))


def test_talking_heads_mixing_equals_a_linear_over_heads():
    linear = randomize(nn.Linear(4, 4))
    attn = torch.randn(2, 4, 5, 7)
    expected = linear(attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)   # the official formulation
    torch.testing.assert_close(mix_heads(attn, linear), expected)
    torch.testing.assert_close(mix_heads(attn, linear, 0.5), linear(0.5 * attn.permute(0, 2, 3, 1)).permute(0, 3, 1, 2))


@pytest.mark.parametrize('norm', ['bn', 'ln'])
def test_hmlp_stem_never_mixes_patches(norm):
    """Masking before or after the stem is the same: changing some 16x16 patches changes only their tokens."""
    stem = randomize(HMLPStem(img_size=64, embed_dim=64, norm=norm)).eval()
    x = torch.randn(2, 3, 64, 64)
    masked = x.clone()
    masked[:, :, 16:32, 32:48] = torch.randn(2, 3, 16, 16)       # patch (1, 2) -> token 6
    with torch.no_grad():
        (a, grid), (b, _) = stem(x), stem(masked)
    assert grid == (4, 4)
    changed = (a - b).abs().amax(dim=(0, 2)) > 1e-6
    assert changed.nonzero().flatten().tolist() == [6]


def test_hmlp_stem_needs_16x16_patches():
    with pytest.raises(ValueError, match='16x16'):
        create_model('vit_demo_patch8_64', stem='hmlp')


def test_parallel_block_is_the_three_things_equation():
    block = randomize(ParallelBlock(32, num_heads=2, num_parallel=3, init_values=1e-4)).eval()
    x = torch.randn(2, 5, 32)
    y = x + sum(b.ls(b.attn(b.norm(x))) for b in block.attns)
    y = y + sum(b.ls(b.mlp(b.norm(y))) for b in block.ffns)
    torch.testing.assert_close(block(x), y)


def test_stochastic_depth():
    assert drop_path_rates(0.1, 3) == [0.0, 0.05, 0.1]
    assert drop_path_rates(0.1, 3, uniform=True) == [0.1] * 3
    model = create_model('deit3_small_patch16_224', depth=3, img_size=32, drop_path_rate=0.2)
    assert [b.drop_path1.drop_prob for b in model.blocks] == [0.2] * 3      # DeiT III: uniform
    model = create_model('deit_small_patch16_224', depth=3, img_size=32, drop_path_rate=0.2)
    assert model.blocks[0].drop_path1 is None and model.blocks[2].drop_path2.drop_prob == 0.2
    block = randomize(Block(16, num_heads=2, init_values=0.1, drop_path=0.5))
    x = torch.randn(8, 4, 16)
    torch.manual_seed(0)
    assert not torch.equal(block.train()(x), block(x))
    assert torch.equal(block.eval()(x), block(x))


def test_distilled_heads():
    model = randomize(create_model('deit_tiny_distilled_patch16_224', depth=1, img_size=32, num_classes=5))
    x = torch.randn(2, 3, 32, 32)
    tokens = model.eval().forward_features(x)
    expected = (model.head(tokens[:, 0]) + model.head_dist(tokens[:, 1])) / 2
    torch.testing.assert_close(model(x), expected)
    model.set_distilled_training()
    cls_logits, dist_logits = model.train()(x)
    assert cls_logits.shape == dist_logits.shape == (2, 5)


def test_global_average_pooling_uses_fc_norm():
    model = randomize(create_model('vit_tiny12h_patch16_224', depth=1, img_size=32, global_pool='avg')).eval()
    assert isinstance(model.norm, nn.Identity) and isinstance(model.fc_norm, nn.LayerNorm)
    x = torch.randn(2, 3, 32, 32)
    tokens = model.forward_features(x)
    torch.testing.assert_close(model(x), model.head(model.fc_norm(tokens[:, 1:].mean(1))))


def test_mmengine_init_weights_keeps_loaded_weights(tmp_path):
    """mmengine runners call init_weights() on every sub-module: it must not re-initialise a loaded model."""
    from backbones import save_checkpoint
    source = randomize(create_model('vit_demo_patch8_64', depth=1))
    path = save_checkpoint(tmp_path / 'b.pth', source)
    model = create_model('vit_demo_patch8_64', depth=1, checkpoint=path)
    model.init_weights()
    torch.testing.assert_close(model.blocks[0].mlp.fc1.weight, source.blocks[0].mlp.fc1.weight)


@pytest.mark.parametrize('name', ['deit3_small_patch16_18x2', 'deit_tiny_distilled_patch16_224', 'cait_xxs24_224'])
def test_class_token_shortcut_is_exact(name):
    """forward() lets the last block update only the prefix tokens: same logits and same gradients."""
    model = randomize(create_model(name, depth=2, img_size=32, num_classes=5)).eval()
    x = torch.randn(2, 3, 32, 32)
    fast = model(x)
    full = model.forward_head(model.forward_features(x))
    torch.testing.assert_close(fast, full)
    fast.square().sum().backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    full.square().sum().backward()
    for n, p in model.named_parameters():
        if p.grad is not None:
            scale = p.grad.abs().max().item()
            torch.testing.assert_close(grads[n], p.grad, rtol=1e-4, atol=1e-5 * scale, msg=n)


@pytest.mark.parametrize('name', ['deit3_small_patch16_224', 'cait_xxs24_224'])
def test_bf16_autocast_training_step(name):
    """A bf16 autocast training step (CPU attention picks its own kernel, see layers/attention.py): fp32
    gradients for the fp32 weights, and logits that match fp32 to bf16 precision."""
    model = randomize(create_model(name, depth=2, img_size=32, num_classes=5))
    x = torch.randn(2, 3, 32, 32)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        logits = model(x)
    assert logits.dtype == torch.bfloat16
    logits.float().sum().backward()
    assert all(p.grad is not None and p.grad.dtype == torch.float32 for p in model.blocks.parameters())
    torch.testing.assert_close(logits.float(), model(x), rtol=0.05, atol=0.05)


@pytest.mark.parametrize('mask', [None, 'bool'])
def test_cpu_autocast_attention_paths_agree(monkeypatch, mask):
    """Under CPU autocast with a backward to follow, attention over up to 1024 keys is computed explicitly
    in bf16 and longer sequences by the fp32 flash kernel: both match fp32 SDPA (outputs and gradients) to
    bf16 precision."""
    from backbones.layers import attention
    torch.manual_seed(0)
    q, k, v = (torch.randn(2, 3, 50, 16) for _ in range(3))
    attn_mask = torch.rand(50, 50) > 0.3 if mask else None
    if attn_mask is not None:
        attn_mask.fill_diagonal_(True)

    def run(limit):
        monkeypatch.setattr(attention, 'EXPLICIT_BF16_MAX_KEYS', limit)
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        with torch.autocast('cpu', dtype=torch.bfloat16):
            out = attention.sdpa(*(t.to(torch.bfloat16) for t in leaves), attn_mask=attn_mask)
        out.float().square().sum().backward()
        return out, [t.grad for t in leaves]

    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    reference = torch.nn.functional.scaled_dot_product_attention(*leaves, attn_mask=attn_mask)
    reference.square().sum().backward()
    explicit, flash = run(1024), run(0)
    assert explicit[0].dtype == torch.bfloat16 and flash[0].dtype == torch.float32
    for out, grads in (explicit, flash):
        torch.testing.assert_close(out.float(), reference, rtol=0.03, atol=0.03)
        for grad, want in zip(grads, (t.grad for t in leaves)):
            torch.testing.assert_close(grad, want, rtol=0.05, atol=0.05 * want.abs().max().item())
