"""Parallel ViT blocks run fused (one wider operation for the k branches): the same function as the branches one
after the other, with the same parameters, state dict and gradients; timm's parallel ViT as the outside reference."""
import copy

import pytest
import timm
import torch

from _backbone_helpers import randomize
from backbones import create_model
from backbones.layers import ParallelBlock


def _pair(k=2, **kwargs):
    fused = randomize(ParallelBlock(48, num_heads=3, num_parallel=k, **kwargs))
    seq = copy.deepcopy(fused)
    seq.fused = False
    return fused, seq


@pytest.mark.parametrize('k,kwargs', [(2, dict(init_values=1e-4)), (3, dict(init_values=None, qkv_bias=False))])
def test_fused_block_equals_the_branches_one_after_the_other(k, kwargs):
    fused, seq = _pair(k, **kwargs)
    x = torch.randn(2, 7, 48)
    for module in (fused.eval(), seq.eval()):
        assert module.runs_fused() is module.fused
    torch.testing.assert_close(fused(x), seq(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(fused(x, num_queries=2), seq(x, num_queries=2), rtol=1e-5, atol=1e-5)
    assert fused(x, num_queries=2).shape == (2, 2, 48)
    assert list(fused.state_dict()) == list(seq.state_dict())  # the branches' names, nothing stacked saved


def test_cpu_inference_in_chunks_of_images_is_the_same_function():
    """On CPU without gradients a large batch runs a few images at a time (parallel_fused.CPU_CHUNK_TOKENS): the
    same outputs; a training input (requires grad) runs whole."""
    from backbones.layers.parallel_fused import CPU_CHUNK_TOKENS, cpu_chunk_images
    fused, seq = _pair(2, init_values=1e-4)
    x = torch.randn(5, CPU_CHUNK_TOKENS // 2 + 1, 48)  # one image per chunk: five chunks
    assert cpu_chunk_images(x) == 1 and cpu_chunk_images(x[:1]) == 0
    assert cpu_chunk_images(x.clone().requires_grad_()) == 0
    with torch.inference_mode():
        torch.testing.assert_close(fused.eval()(x), seq.eval()(x), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(fused(x, num_queries=1), seq(x, num_queries=1), rtol=1e-5, atol=1e-5)


def test_fused_training_step_has_the_same_gradients():
    fused, seq = _pair(2, init_values=0.1)
    x = torch.randn(2, 7, 48)
    for m in (fused.train(), seq.train()):
        m(x).square().sum().backward()
    assert fused.runs_fused()
    for (n, a), (_, b) in zip(fused.named_parameters(), seq.named_parameters()):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-5, msg=n)


def test_cached_stacked_weights_follow_parameter_updates():
    fused, seq = _pair(2, init_values=0.1)
    fused.eval(), seq.eval()
    x = torch.randn(1, 5, 48)
    with torch.no_grad():
        fused(x)  # caches the stacked matrices
        for m in (fused, seq):
            m.attns[1].attn.qkv.weight.mul_(0.5)   # in place: a new version of the same storage
            m.ffns[0].ls.gamma.add_(1.0)
        torch.testing.assert_close(fused(x), seq(x), rtol=1e-5, atol=1e-5)


def test_under_autocast_the_stacked_weights_are_cached_in_its_dtype():
    """bf16 autocast inference keeps the stacked matrices in bf16 (cast once, not at every call and chunk): the
    same outputs as the sequential form under the same autocast, to bf16 rounding; back in fp32 they are rebuilt."""
    fused, seq = _pair(2, init_values=0.1)
    fused.eval(), seq.eval()
    x = torch.randn(2, 7, 48)
    with torch.no_grad():
        with torch.autocast('cpu', dtype=torch.bfloat16):
            got, expected = fused(x), seq(x)
            assert all(t.dtype == torch.bfloat16 for t in fused._stacked_attention() + fused._stacked_mlp())
        torch.testing.assert_close(got.float(), expected.float(), rtol=3e-2, atol=3e-2)
        assert all(t.dtype == torch.float32 for t in fused._stacked_attention() + fused._stacked_mlp())
        torch.testing.assert_close(fused(x), seq(x), rtol=1e-5, atol=1e-5)
    with torch.device('meta'), torch.no_grad():  # no autocast state for the meta device: shapes only
        assert ParallelBlock(48, num_heads=3, init_values=0.1).eval()(torch.randn(2, 7, 48)).shape == (2, 7, 48)


def test_sequential_where_the_stacked_form_does_not_apply():
    block = randomize(ParallelBlock(48, num_heads=3, drop_path=0.1, init_values=1e-4))
    assert not block.train().runs_fused()                 # each branch draws its own stochastic-depth mask
    assert block.eval().runs_fused()
    assert not block.runs_fused(return_attn='probs')      # maps come from the explicit per-branch attention
    assert block(torch.randn(1, 5, 48), return_attn='probs')[1].shape == (1, 6, 5, 5)
    assert not randomize(ParallelBlock(48, num_heads=3, window_size=2)).eval().runs_fused()


def test_fused_model_matches_timm_parallel_vit():
    """timm's ``vit_small_patch16_18x2_224`` runs its branches one after the other (ParallelThingsBlock)."""
    ref = randomize(timm.create_model('vit_small_patch16_18x2_224', pretrained=False, depth=2, img_size=64,
                                      no_embed_class=True, init_values=1e-4)).eval()
    ours = create_model('deit3_small_patch16_18x2', depth=2, img_size=64).eval()
    ours.load_state_dict(ref.state_dict())
    assert all(b.fused for b in ours.blocks)
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-4, atol=1e-4)
