"""One way through the blocks (backbones/block_walk.py): nothing outside the backbone files walks ``.blocks`` or
calls a backbone's private members, and the walk's taps equal an independent block-by-block loop written here
(``forward_intermediates`` against timm's: tests/test_forward_intermediates.py)."""
import ast
from pathlib import Path

import pytest
import torch

from backbones import create_model
from backbones.block_walk import normalize_indices

ROOT = Path(__file__).resolve().parents[1]
BACKBONE_FILES = sorted((ROOT / 'backbones').glob('*.py')) + sorted((ROOT / 'backbones' / 'layers').glob('*.py'))
CALLERS = ('pretrain', 'downstream', 'vitbench', 'tools', 'backbones/checkpoint')
BLOCK_LISTS = {'blocks', 'blocks_token_only'}


def backbone_private_names() -> set:
    """Private methods and attributes (``_name``, not dunder) the backbone classes define."""
    names = set()
    for path in BACKBONE_FILES:
        for cls in (n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ClassDef)):
            for node in ast.walk(cls):
                name = None
                if isinstance(node, ast.FunctionDef):
                    name = node.name
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    name = node.attr
                if name and name.startswith('_') and not name.startswith('__'):
                    names.add(name)
    return names


def reaches(path: Path, private: set, root: Path = ROOT) -> list:
    """``obj.blocks`` / ``obj.<backbone private>`` on anything but ``self`` (a caller's own blocks are its own),
    and ``getattr`` / ``hasattr`` of those names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        where = f'{path.relative_to(root)}:{getattr(node, "lineno", 0)}'
        if isinstance(node, ast.Attribute) and (node.attr in BLOCK_LISTS or node.attr in private) \
                and not (isinstance(node.value, ast.Name) and node.value.id == 'self'):
            found.append(f'{where}: .{node.attr}')
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ('getattr', 'hasattr')
              and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)
              and node.args[1].value in BLOCK_LISTS | private):
            found.append(f'{where}: {node.func.id}(..., {node.args[1].value!r})')
    return sorted(found, key=lambda hit: int(hit.split(':')[1]))


def test_no_caller_walks_the_blocks_or_calls_a_backbone_private():
    private = backbone_private_names()
    assert {'_trunk_input', '_pos_embed', '_tokens', '_init_weights'} <= private  # the check sees the internals
    found = [hit for folder in CALLERS for path in sorted((ROOT / folder).rglob('*.py'))
             for hit in reaches(path, private)]
    assert not found, 'reaches into a backbone (use iter_hidden / forward_intermediates, backbones/block_walk.py):\n' \
        + '\n'.join(found)


def test_the_check_finds_a_reach(tmp_path):
    bad = tmp_path / 'bad.py'
    bad.write_text('def f(vit, x):\n    for b in vit.blocks:\n        x = b(x)\n    return vit._trunk_input(x), '
                   "getattr(vit, 'blocks_token_only')\n")
    hits = [h.split(': ', 1)[1] for h in reaches(bad, {'_trunk_input'}, root=tmp_path)]
    assert sorted(hits) == sorted(['.blocks', '._trunk_input', "getattr(..., 'blocks_token_only')"])
    ok = tmp_path / 'own.py'
    ok.write_text('class Decoder:\n    def forward(self, x):\n        for b in self.blocks:\n            x = b(x)\n')
    assert reaches(ok, {'_trunk_input'}, root=tmp_path) == []


# ----------------------------------------------------------------------------------------------- the taps
def manual_walk(model, x, keep=None):
    """The ViT's hidden states by hand: patch embedding, prefix tokens and positions, then block by block."""
    tokens, grid = model.patch_embed(x)
    pos = model.pos_embed  # the models below are built at the input's size: no resampling
    p = model.pos_embed_prefix
    prefix = [t for t in (model.cls_token, model.dist_token) if t is not None]
    tokens = tokens + pos[:, p:]
    prefix = [t + pos[:, i:i + 1] if p else t for i, t in enumerate(prefix)]
    if keep is not None:
        tokens = torch.stack([tokens[b, keep[b]] for b in range(x.shape[0])])
    x = torch.cat([t.expand(x.shape[0], -1, -1) for t in prefix] + [tokens], dim=1)
    states, maps = [x], []
    for blk in model.blocks:
        x, attn = blk(x, grid=grid, return_attn='logits')
        states.append(x)
        maps.append(attn)
    return states, maps, tuple(grid)


@pytest.mark.parametrize('arch', ['vit_demo_patch8_64', 'deit_tiny_distilled_patch16_224', 'deit3_small_patch16_224'])
def test_hidden_states_equal_a_manual_loop(arch):
    torch.manual_seed(0)
    model = create_model(arch, depth=3, img_size=64, num_classes=0, global_pool='').eval()
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        states, maps, grid = manual_walk(model, x)
        hidden = list(model.iter_hidden(x, attn_indices=[0, 2], attn_kind='logits'))
    assert [h.index for h in hidden] == [0, 1, 2, 3]
    prefix = model.num_prefix_tokens
    for h, state in zip(hidden, states):
        torch.testing.assert_close(h.tokens, state)
        torch.testing.assert_close(h.patches(), state[:, prefix:])
        assert h.grid == grid == (64 // model.patch_embed.patch_size[0],) * 2
    norms = [blk.norm1 for blk in model.blocks] + [model.norm]
    for h, state, norm in zip(hidden, states, norms):
        torch.testing.assert_close(h.normed(), norm(state))
    assert hidden[0].attn is None and hidden[2].attn is None
    torch.testing.assert_close(hidden[1].attn, maps[0])
    torch.testing.assert_close(hidden[3].attn, maps[2])


def test_keep_runs_the_kept_patches_after_the_position_embedding():
    torch.manual_seed(0)
    model = create_model('deit3_small_patch16_224', depth=2, img_size=64, num_classes=0).eval()  # no class position
    x = torch.randn(2, 3, 64, 64)
    keep = torch.stack([torch.randperm(16)[:5] for _ in range(2)])
    with torch.no_grad():
        states, _, _ = manual_walk(model, x, keep)
        hidden = list(model.iter_hidden(x, keep=keep))
        torch.testing.assert_close(hidden[-1].tokens, states[-1])
        # every patch in order: the full walk itself
        full = list(model.iter_hidden(x))[-1].tokens
        everything = list(model.iter_hidden(x, keep=torch.arange(16).expand(2, -1)))[-1].tokens
    assert hidden[-1].tokens.shape == (2, 1 + 5, 384)
    torch.testing.assert_close(everything, full)


def test_stop_runs_no_further_block():
    model = create_model('vit_demo_patch8_64', num_classes=0).eval()
    calls = []
    for i, blk in enumerate(model.blocks):
        blk.register_forward_hook(lambda *_, i=i: calls.append(i))
    with torch.no_grad():
        hidden = list(model.iter_hidden(torch.randn(1, 3, 64, 64), stop=2))
    assert [h.index for h in hidden] == [0, 1, 2, 3] and calls == [0, 1, 2]


def test_walk_errors_name_the_model_and_what_it_lacks():
    windowed = create_model('vit_demo_patch8_64', window_size=4, global_attn_indexes=[5], num_classes=0)
    x = torch.randn(1, 3, 64, 64)
    with pytest.raises(ValueError, match='VisionTransformer: its blocks cannot run on a subset'):
        next(windowed.iter_hidden(x, keep=torch.zeros(1, 4, dtype=torch.long)))
    resmlp = create_model('resmlp_demo_patch8_64', num_classes=0)
    with pytest.raises(ValueError, match='ResMLP: its blocks have no attention maps'):
        next(resmlp.iter_hidden(x, attn_indices=[0]))
    parallel = create_model('deit3_small_patch16_18x2', depth=1, img_size=64, num_classes=0)
    hidden = next(parallel.iter_hidden(x))
    with pytest.raises(ValueError, match='no single norm1'):
        hidden.normed()


def test_patchconvnet_maps_equal_its_trunk_run_by_hand():
    torch.manual_seed(0)
    model = create_model('patchconvnet_demo_64', depth=3, num_classes=0).eval()
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        state, _ = model.patch_embed(x)
        maps = []
        for blk in model.blocks:
            state = blk(state)
            maps.append(state)
        final, got = model.forward_intermediates(x, [0, 2])
        normed = model.forward_intermediates(x, [0, 2], norm=True, intermediates_only=True)
        nlc = model.forward_intermediates(x, 1, norm=True, output_fmt='NLC', intermediates_only=True)
        tokens = [h.patches() for h in model.iter_hidden(x)]
        expected_final = model.forward_features(x)
    by_hand = [model.norm(m.permute(0, 2, 3, 1)).permute(0, 3, 1, 2) for m in maps]
    torch.testing.assert_close(got[0], maps[0])
    torch.testing.assert_close(got[1], maps[2])
    torch.testing.assert_close(normed[0], by_hand[0])
    torch.testing.assert_close(normed[1], by_hand[2])
    torch.testing.assert_close(nlc[0], by_hand[2].flatten(2).transpose(1, 2))
    torch.testing.assert_close(final, expected_final)
    torch.testing.assert_close(tokens[3], maps[2].flatten(2).transpose(1, 2))


def test_normalize_indices():
    assert normalize_indices([-1, 0, 5, 0], 6) == [0, 5]
    with pytest.raises(ValueError, match='out index 6 is out of range for a model with 6 blocks'):
        normalize_indices(6, 6)
