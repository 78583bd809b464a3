"""ViTDet's relative position biases (detectron2 ``use_rel_pos``) and the dense backbones' ``with_cp``.

The attention is checked against a reference written here from detectron2's formula, spelled differently:
logits over all tokens at once, every (query, key) pair's offset looked up in the tables (a gather, not the
decomposed einsum), windows as a mask, and the table interpolation done by hand.
"""
import os.path as osp

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper

from _backbone_helpers import randomize
from backbones import CheckpointError, ViTBackbone, load_checkpoint
from backbones.layers import Block
from vitbench.registry import MODELS

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
DIM, HEADS = 32, 2
SMALL = dict(arch='deit3_small_patch16_224', depth=4, embed_dim=DIM, num_heads=HEADS, out_indices=-1,
             final_norm=False, window_size=3, global_attn_indexes=[1, 3])


def interpolate_table(table: torch.Tensor, length: int) -> torch.Tensor:
    """Linear resize along dim 0 with half-pixel centres (PyTorch's ``align_corners=False``), by hand."""
    n = table.shape[0]
    if n == length:
        return table
    rows = []
    for i in range(length):
        src = max((i + 0.5) * n / length - 0.5, 0.0)
        lo = min(int(src), n - 1)
        hi = min(lo + 1, n - 1)
        t = src - lo
        rows.append((1 - t) * table[lo] + t * table[hi])
    return torch.stack(rows)


def reference_attention(attn, x, grid, window, num_prefix, swap_tables=False):
    """detectron2's ``attn = (q * scale) @ k.T + q·Rh[dy] + q·Rw[dx]`` over (B, P + H*W, C) tokens, restricted to
    windows of ``window`` (0: global) among the patch tokens; prefix tokens have no bias and attend globally.
    Returns (output, logits)."""
    B, L, C = x.shape
    H, W = grid
    P, h, d = num_prefix, attn.num_heads, attn.head_dim
    q, k, v = (x @ attn.qkv.weight.T + attn.qkv.bias).view(B, L, 3, h, d).permute(2, 0, 3, 1, 4)
    logits = (q * attn.scale) @ k.transpose(-2, -1)                  # (B, h, L, L)
    rows = torch.arange(H * W) // W
    cols = torch.arange(H * W) % W
    if window:  # coordinates inside the window, and which window
        size = (window, window)
        win_r, win_c = rows // window, cols // window
        same = (win_r[:, None] == win_r[None]) & (win_c[:, None] == win_c[None])
        rows, cols = rows % window, cols % window
    else:
        size = (H, W)
        same = torch.ones(H * W, H * W, dtype=torch.bool)
    th, tw = (attn.rel_pos_w, attn.rel_pos_h) if swap_tables else (attn.rel_pos_h, attn.rel_pos_w)
    th, tw = interpolate_table(th, 2 * size[0] - 1), interpolate_table(tw, 2 * size[1] - 1)
    Rh = th[rows[:, None] - rows[None] + size[0] - 1]                 # (N, N, d): each pair's vertical offset
    Rw = tw[cols[:, None] - cols[None] + size[1] - 1]
    qp = q[:, :, P:]                                                  # the unscaled queries of the patches
    bias = torch.einsum('bhnd,nmd->bhnm', qp, Rh) + torch.einsum('bhnd,nmd->bhnm', qp, Rw)
    logits[:, :, P:, P:] += bias
    logits[:, :, P:, P:] = logits[:, :, P:, P:].masked_fill(~same, float('-inf'))
    out = (logits.softmax(-1) @ v).transpose(1, 2).reshape(B, L, C)
    return out @ attn.proj.weight.T + attn.proj.bias, logits


def reference_block(blk, x, grid, swap_tables=False):
    y, logits = reference_attention(blk.attn, blk.norm1(x), grid, blk.window_size, blk.num_prefix_tokens,
                                    swap_tables)
    x = x + y
    return x + blk.mlp(blk.norm2(x)), logits


def random_block(window, rel_pos_size, num_prefix, seed=0):
    blk = Block(DIM, HEADS, window_size=window, num_prefix_tokens=num_prefix, rel_pos_size=rel_pos_size)
    randomize(blk, seed)  # every parameter random, the tables included (0.1 * N(0, 1))
    with torch.no_grad():  # tables large enough for the bias to matter
        blk.attn.rel_pos_h.mul_(10)
        blk.attn.rel_pos_w.mul_(10)
    return blk.eval()


# grids: a windowed block with padding (5x7 in 3x3 windows); global blocks whose tables are built for 4x4 and
# used at 4x4 (as built) and at 3x6 (the h table shrunk from 7 to 5 rows, the w table grown from 7 to 11)
@pytest.mark.parametrize('window, rel_pos_size, grid', [(3, (3, 3), (5, 7)), (0, (4, 4), (4, 4)),
                                                        (0, (4, 4), (3, 6)), (0, (4, 5), (6, 3))])
@pytest.mark.parametrize('num_prefix', [0, 1])
def test_block_matches_detectron2_formula(window, rel_pos_size, grid, num_prefix):
    blk = random_block(window, rel_pos_size, num_prefix)
    x = torch.randn(2, num_prefix + grid[0] * grid[1], DIM)
    with torch.no_grad():
        out = blk(x, grid=grid)
        expected, logits = reference_block(blk, x, grid)
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
        # the reference is sensitive to the axes: the tables exchanged give another output
        swapped, _ = reference_block(blk, x, grid, swap_tables=True)
        assert (swapped - expected).abs().max() > 1e-2
        if not window:  # the explicit path (attention maps) computes the same logits and output
            out_explicit, maps = blk(x, grid=grid, return_attn='logits')
            torch.testing.assert_close(out_explicit, expected, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(maps, logits, rtol=1e-5, atol=1e-5)


def test_relative_positions_need_the_grid():
    blk = random_block(0, (2, 2), 0)
    with pytest.raises(ValueError, match=r'blk\(x, grid=\(H, W\)\)'):
        blk(torch.randn(1, 4, DIM))
    with pytest.raises(ValueError, match='6 queries do not form the 2x2 grid'):
        blk(torch.randn(1, 6, DIM), grid=(2, 2))


def test_table_sizes_follow_the_attention_grid_of_each_block():
    model = ViTBackbone(img_size=(96, 128), use_rel_pos=True, **SMALL)   # a 6x8 token grid
    shapes = [(tuple(b.attn.rel_pos_h.shape), tuple(b.attn.rel_pos_w.shape)) for b in model.blocks]
    head_dim = DIM // HEADS
    assert shapes[0] == shapes[2] == ((5, head_dim), (5, head_dim))       # 3x3 windows
    assert shapes[1] == shapes[3] == ((11, head_dim), (15, head_dim))     # the 6x8 grid
    assert not any(p.detach().any() for n, p in model.named_parameters() if 'rel_pos' in n)
    assert not any('rel_pos' in n for n, _ in ViTBackbone(img_size=96, **SMALL).named_parameters())


def _pair(img_size=96, **kw):
    """A randomised backbone with zero tables and the same weights without relative positions."""
    rel = randomize(ViTBackbone(img_size=img_size, use_rel_pos=True, **dict(SMALL, **kw)))
    for n, p in rel.named_parameters():
        if 'rel_pos' in n:
            p.data.zero_()
    plain = ViTBackbone(img_size=img_size, **dict(SMALL, **kw))
    plain.load_state_dict({k: v for k, v in rel.state_dict().items() if 'rel_pos' not in k})
    return rel.eval(), plain.eval()


def test_zero_tables_give_the_model_without_relative_positions():
    rel, plain = _pair()
    x = torch.randn(2, 3, 80, 112)  # 5x7 tokens: padded windows, global tables interpolated from 6x6
    with torch.no_grad():
        torch.testing.assert_close(rel(x), plain(x), rtol=1e-5, atol=1e-5)
        rel.blocks[1].attn.rel_pos_w.normal_()
        assert not torch.allclose(rel(x)[0], plain(x)[0], atol=1e-3)


def test_pretrained_checkpoint_without_tables_loads_them_as_zero(tmp_path):
    rel, plain = _pair()
    path = tmp_path / 'pretrained.pth'
    torch.save(plain.state_dict(), path)   # a timm-style state dict: pretraining exports have no tables
    model = MODELS.build(dict(type='vitbench.VisionTransformer', img_size=96, use_rel_pos=True,
                              init_cfg=dict(type='Pretrained', checkpoint=str(path)), **SMALL))
    model.init_weights()                   # mmengine's path: no missing-key error
    assert model.is_init
    assert not any(p.detach().any() for n, p in model.named_parameters() if 'rel_pos' in n)
    x = torch.randn(1, 3, 96, 96)
    with torch.no_grad():
        torch.testing.assert_close(model.eval()(x), plain(x), rtol=1e-5, atol=1e-5)
    report = load_checkpoint(ViTBackbone(img_size=96, use_rel_pos=True, **SMALL), str(path), verbose=False)
    assert any("left freshly initialised: ['blocks.*.attn.rel_pos_h', 'blocks.*.attn.rel_pos_w']" in n
               for n in report.notes), report.notes


def test_checkpoint_with_tables(tmp_path):
    rel, _ = _pair(img_size=64)                                  # global tables of 7 rows (4x4 tokens)
    with torch.no_grad():
        for n, p in rel.named_parameters():
            if 'rel_pos' in n:
                p.normal_()
    path = tmp_path / 'det.pth'
    torch.save(rel.state_dict(), path)
    with pytest.raises(CheckpointError, match='pass use_rel_pos=True'):
        load_checkpoint(ViTBackbone(img_size=64, **SMALL), str(path), verbose=False)
    bigger = ViTBackbone(img_size=96, use_rel_pos=True, **SMALL)  # 6x6 tokens: 11 rows
    report = load_checkpoint(bigger, str(path), verbose=False)
    assert any('resized linearly from 7 to 11 rows' in n for n in report.notes), report.notes
    torch.testing.assert_close(bigger.blocks[1].attn.rel_pos_h, interpolate_table(rel.blocks[1].attn.rel_pos_h, 11))
    torch.testing.assert_close(bigger.blocks[0].attn.rel_pos_w, rel.blocks[0].attn.rel_pos_w)  # windows: as saved


def test_tables_decay_and_take_their_blocks_layer_id():
    """detectron2's ViTDet optimizer: ``get_vit_lr_decay_rate`` puts ``blocks.i.*`` in layer i + 1, and weight
    decay spares only norms (``weight_decay_norm=0``) and ``pos_embed``: the tables decay."""
    model = torch.nn.Module()
    model.backbone = ViTBackbone(img_size=64, use_rel_pos=True, **SMALL)
    assert model.backbone.get_layer_id('backbone.blocks.2.attn.rel_pos_h') == 3
    wrapper = build_optim_wrapper(model, dict(
        optimizer=dict(type='AdamW', lr=1.0, weight_decay=0.1),
        constructor='vitbench.LayerDecayOptimWrapperConstructor', paramwise_cfg=dict(layer_decay_rate=0.5)))
    groups = {n: g for g in wrapper.optimizer.param_groups for n in g['param_names']}
    for name in ('backbone.blocks.2.attn.rel_pos_h', 'backbone.blocks.2.attn.rel_pos_w'):
        assert groups[name]['layer_id'] == 3 and groups[name]['weight_decay'] == 0.1
        assert groups[name]['lr'] == groups['backbone.blocks.2.attn.qkv.weight']['lr']
    assert groups['backbone.pos_embed']['weight_decay'] == 0.0


def _outputs_and_grads(model, x, seed=0):
    torch.manual_seed(seed)  # the same drop-path draws in both runs
    outs = model(x)
    sum(o.square().mean() for o in outs).backward()
    return [o.detach() for o in outs], {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize('cfg', [
    dict(type='vitbench.VisionTransformer', img_size=64, use_rel_pos=True, drop_path_rate=0.3,
         **dict(SMALL, out_indices=[1, 3])),
    dict(type='vitbench.CaiT', arch='cait_xxs24_224', depth=2, embed_dim=32, img_size=32, out_indices=[0, 1],
         drop_path_rate=0.3),
    dict(type='vitbench.ResMLP', arch='resmlp_12', depth=2, embed_dim=32, img_size=32, out_indices=[1]),
    dict(type='vitbench.PatchConvNet', arch='patchconvnet_s60', depth=2, embed_dim=32, img_size=32,
         out_indices=[1, 1], drop_path_rate=0.3),
], ids=lambda c: c['type'])
def test_with_cp_gives_the_same_outputs_and_gradients(cfg):
    plain = randomize(MODELS.build(cfg)).train()
    ckpt = MODELS.build(dict(cfg, with_cp=True)).train()
    ckpt.load_state_dict(plain.state_dict())
    x = torch.randn(2, 3, 64, 64) if 'VisionTransformer' in cfg['type'] else torch.randn(2, 3, 32, 32)
    calls = []
    ckpt.blocks[0].register_forward_pre_hook(lambda *_: calls.append(1))  # recomputation may stop early
    outs, grads = _outputs_and_grads(plain, x)
    outs_cp, grads_cp = _outputs_and_grads(ckpt, x)
    assert len(calls) == 2  # the block ran again in the backward: its activations were not kept
    for a, b in zip(outs, outs_cp):
        torch.testing.assert_close(a, b)
    assert grads.keys() == grads_cp.keys() and grads
    for n in grads:
        torch.testing.assert_close(grads[n], grads_cp[n], msg=n)
    with torch.no_grad():  # eval and no-grad run the blocks plainly
        ckpt.eval()(x)
    assert len(calls) == 3


def _config(path):
    return Config.fromfile(osp.join(REPO, path))


@pytest.mark.parametrize('path, img_size, with_cp', [
    ('configs/maskrcnn_deit3_b.py', 1024, False), ('configs/maskrcnn_deit3_s.py', 1024, False),
    ('configs/maskrcnn_vit_tiny12h_mae.py', 640, True), ('configs/maskrcnn_vit_tiny12h_dmae.py', 640, True),
    ('configs/demo/maskrcnn_demo.py', 128, False)])
def test_vitdet_configs_use_relative_positions(path, img_size, with_cp):
    backbone = _config(path).model.backbone
    assert backbone.use_rel_pos is True and backbone.img_size == img_size
    assert backbone.get('with_cp', False) is with_cp  # MAE-lite: use_act_checkpoint=True; ViTDet-B: not set
    # the tables the config builds (narrow, shallow copy: the table lengths depend on the grid and window only)
    model = MODELS.build(dict(backbone, embed_dim=24, num_heads=3, depth=4, out_indices=-1, init_cfg=None))
    grid = img_size // model.patch_embed.patch_size[0]
    rows = [b.attn.rel_pos_h.shape[0] for b in model.blocks]
    assert rows == [2 * grid - 1 if i in backbone.global_attn_indexes else 2 * backbone.window_size - 1
                    for i in range(4)]
    assert len(set(rows)) == 2 and all(b.attn.rel_pos_w.shape == (r, 8) for b, r in zip(model.blocks, rows))


def test_backbone_swap_keeps_relative_positions_in_vits_only():
    pytest.importorskip('mmcv.ops')
    from downstream.backbone_swap import swap_backbone
    cfg = _config('configs/maskrcnn_vit_tiny12h_mae.py')
    swap_backbone(cfg, 'deit3_small_patch16_224')
    assert cfg.model.backbone.use_rel_pos is True and cfg.model.backbone.with_cp is True
    swap_backbone(cfg, 'cait_xxs24_224')
    assert 'use_rel_pos' not in cfg.model.backbone and cfg.model.backbone.with_cp is True
    patchconvnet = _config('configs/maskrcnn_patchconvnet_s60.py').model.backbone
    assert patchconvnet.type == 'vitbench.PatchConvNet' and 'use_rel_pos' not in patchconvnet
