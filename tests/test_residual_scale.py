"""The residual-branch schemes of the ViT family (backbones/layers/residual_scale.py; CaiT Table 1, thesis Tables
3.11, 3.12): each against its paper's formula, computed here by hand or by timm's blocks: the initial values, what
trains, the output at init; and a few steps of training of each."""
import math

import pytest
import torch
from timm.models.vision_transformer import Block as TimmBlock

from backbones import create_model
from backbones.checkpoint import save_checkpoint
from backbones.layers.residual_scale import SCHEMES, layer_scale_eps

TINY = dict(img_size=32, patch_size=8, embed_dim=32, depth=4, num_heads=2, num_classes=5)


def tiny(**kwargs):
    torch.manual_seed(0)
    return create_model('vit_demo_patch8_64', **dict(TINY, **kwargs))


def gammas(model):
    return {n: p for n, p in model.named_parameters() if n.endswith('.gamma')}


def test_the_epsilon_of_cait_by_depth():
    # CaiT §2: 0.1 up to depth 18, 1e-5 for depth 24, 1e-6 for deeper networks
    assert [layer_scale_eps(d) for d in (12, 18, 24, 36, 48)] == [0.1, 0.1, 1e-5, 1e-6, 1e-6]
    model = create_model('vit_demo_patch8_64', **dict(TINY, depth=2, init_values='by_depth'))
    assert all(torch.equal(g, torch.full((32,), 0.1)) for g in gammas(model).values())


@pytest.mark.parametrize('scheme, shape, value', [
    ('layerscale', (32,), 1e-5), ('rezero', (1,), 0.), ('scalar', (1,), 1e-5), ('fixup', (1,), 1.),
    ('t_fixup', (1,), 1.)])
def test_each_scheme_has_one_scale_per_branch_at_its_papers_value(scheme, shape, value):
    model = tiny(residual_scale=scheme, init_values=1e-5)
    scales = gammas(model)
    assert len(scales) == 2 * TINY['depth']  # α_l and α'_l of every block (CaiT Eq. 3)
    for g in scales.values():
        assert tuple(g.shape) == shape and g.requires_grad and torch.all(g == value)
    assert not gammas(tiny(residual_scale='none', init_values=1e-5))


def test_layer_scale_inits_of_table_3_12():
    zero = gammas(tiny(init_values=1e-2, layer_scale_init='zero'))
    assert all(torch.all(g == 0) for g in zero.values())
    uniform = torch.cat(list(gammas(tiny(init_values=1e-2, layer_scale_init='uniform')).values()))
    assert uniform.min() >= 0 and uniform.max() <= 2e-2 and abs(uniform.mean().item() - 1e-2) < 2e-3
    assert len(set(uniform.tolist())) > 200  # a value per channel
    with pytest.raises(ValueError, match="layer_scale_init='zero' is an init of residual_scale='layerscale'"):
        tiny(residual_scale='rezero', layer_scale_init='zero')
    with pytest.raises(ValueError, match="residual_scale='bogus': expected one of"):
        tiny(residual_scale='bogus')
    with pytest.raises(ValueError, match="residual_scale='scalar' needs init_values"):
        tiny(residual_scale='scalar')


@pytest.mark.parametrize('scheme', ['layerscale', 'scalar'])
def test_a_block_is_timms_block_with_layerscale(scheme):
    # x' = x + diag(λ) SA(η(x)); x'' = x' + diag(λ') FFN(η(x')) (CaiT Eq. 4): timm's LayerScale block, whose
    # per-channel gamma holds the scalar α broadcast over the channels
    model = tiny(residual_scale=scheme, init_values=0.3)
    blk = model.blocks[1]
    with torch.no_grad():
        for g in (blk.ls1.gamma, blk.ls2.gamma):
            g.mul_(torch.linspace(0.5, 2., g.numel()))
    ref = TimmBlock(32, 2, qkv_bias=True, init_values=1.,
                    norm_layer=lambda d, **kw: torch.nn.LayerNorm(d, eps=1e-6, **kw))
    state = {k: (v.expand(32).clone() if k.endswith('gamma') else v) for k, v in blk.state_dict().items()}
    ref.load_state_dict(state)
    x = torch.randn(2, 17, 32)
    torch.testing.assert_close(blk(x), ref(x))


def test_rezero_makes_every_block_the_identity_at_init():
    model = tiny(residual_scale='rezero').eval()
    imgs = torch.randn(2, 3, 32, 32)
    hidden = [h.tokens for h in model.iter_hidden(imgs)]
    for h in hidden[1:]:
        torch.testing.assert_close(h, hidden[0], rtol=0, atol=0)
    x = model.forward_features(imgs)[:, 0]
    torch.testing.assert_close(x, torch.nn.functional.layer_norm(hidden[0][:, 0], (32,), model.norm.weight,
                                                                  model.norm.bias, eps=1e-6))


def test_fixup_init_by_hand():
    # Fixup (Zhang et al., 2019): last layer of each branch 0, the others x L^(-1/(2m-2)) with L = 2 * depth
    # branches of m = 2 layers, classifier 0, scalar multipliers at 1
    plain, fixup = tiny(residual_scale='none'), tiny(residual_scale='fixup')
    scale = 1 / math.sqrt(2 * TINY['depth'])
    for p, f in zip(plain.blocks, fixup.blocks):
        torch.testing.assert_close(f.attn.qkv.weight[64:], p.attn.qkv.weight[64:] * scale)  # v
        torch.testing.assert_close(f.attn.qkv.weight[:64], p.attn.qkv.weight[:64])  # q, k unscaled
        torch.testing.assert_close(f.mlp.fc1.weight, p.mlp.fc1.weight * scale)
        for last in (f.attn.proj, f.mlp.fc2):
            assert not last.weight.any() and not last.bias.any()
    assert not fixup.head.weight.any() and not fixup.head.bias.any()
    # at init: every block the identity, the logits 0; the zeroed layers still train
    imgs = torch.randn(2, 3, 32, 32)
    hidden = [h.tokens for h in fixup.iter_hidden(imgs)]
    torch.testing.assert_close(hidden[-1], hidden[0], rtol=0, atol=0)
    logits = fixup(imgs)
    assert not logits.any()
    torch.nn.functional.cross_entropy(logits, torch.tensor([0, 1])).backward()
    assert fixup.head.weight.grad.abs().sum() > 0


def test_t_fixup_init_by_hand():
    # T-Fixup (Huang et al., 2020): Xavier-uniform, then v, w and the MLP matrices x 0.67 N^(-1/4)
    model = tiny(residual_scale='t_fixup')
    scale = 0.67 * TINY['depth'] ** -0.25

    def bound(fan_in, fan_out):
        return math.sqrt(6 / (fan_in + fan_out))

    for blk in model.blocks:
        q, v = blk.attn.qkv.weight[:32], blk.attn.qkv.weight[64:]
        expected = [(q, bound(32, 32)), (v, bound(32, 32) * scale), (blk.attn.proj.weight, bound(32, 32) * scale),
                    (blk.mlp.fc1.weight, bound(32, 128) * scale), (blk.mlp.fc2.weight, bound(128, 32) * scale)]
        for w, b in expected:  # uniform on [-b, b]: within it, filling it
            assert w.abs().max() <= b * (1 + 1e-6) and w.abs().max() > 0.9 * b
        assert not blk.attn.proj.bias.any() and not blk.mlp.fc1.bias.any()
    weights = torch.cat([blk.mlp.fc1.weight.flatten() for blk in model.blocks])
    assert abs(weights.std().item() / (bound(32, 128) * scale / math.sqrt(3)) - 1) < 0.05


def test_frozen_scales_from_an_earlier_training(tmp_path):
    # thesis §3.5.3: re-trained with the fixed scales an earlier LayerScale training learnt
    learnt = tiny(init_values=0.1)
    with torch.no_grad():
        for g in gammas(learnt).values():
            g.uniform_(0.01, 0.5)
    path = str(tmp_path / 'backbone.pth')
    save_checkpoint(path, learnt, arch='vit_demo_patch8_64')
    torch.manual_seed(1)
    frozen = create_model('vit_demo_patch8_64', **dict(TINY, init_values=0.1, residual_scale_trainable=False,
                                                       residual_scale_from=path))
    for name, g in gammas(frozen).items():
        assert not g.requires_grad and torch.equal(g, gammas(learnt)[name])
    assert not torch.equal(frozen.blocks[0].mlp.fc1.weight, learnt.blocks[0].mlp.fc1.weight)
    with pytest.raises(ValueError, match='residual_scale_from=.*has no residual scales'):
        create_model('vit_demo_patch8_64', **dict(TINY, residual_scale_from=path))
    with pytest.raises(ValueError, match='residual_scale_from=.*has shape'):
        create_model('vit_demo_patch8_64', **dict(TINY, residual_scale='scalar', init_values=0.1,
                                                  residual_scale_from=path))


@pytest.mark.parametrize('scheme', SCHEMES + ('frozen',))
def test_each_scheme_trains_a_few_steps(scheme):
    # a deep thin ViT (8 blocks of width 32, 4 tokens) on one batch: the loss falls, the scales move (frozen: stay)
    kwargs = dict(residual_scale='layerscale', residual_scale_trainable=False) if scheme == 'frozen' \
        else dict(residual_scale=scheme)
    model = tiny(depth=8, img_size=16, init_values=0.1, **kwargs)
    start = {n: g.detach().clone() for n, g in gammas(model).items()}
    imgs, labels = torch.randn(4, 3, 16, 16), torch.arange(4)
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    losses = []
    for _ in range(4):
        loss = torch.nn.functional.cross_entropy(model(imgs), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
    for name, g in gammas(model).items():
        assert torch.equal(g, start[name]) == (scheme == 'frozen'), name


def test_an_epsilon_written_as_a_string_is_refused():
    # YAML 1.1 reads 1e-06 (no dot) as a string: the map writes 1.0e-6; a string that slipped through is one line
    with pytest.raises(ValueError, match="init_values='1e-06': expected a float, None or 'by_depth'"):
        tiny(init_values='1e-06')


def test_a_training_takes_only_the_scales_of_its_checkpoint(tmp_path):
    """CaiT §4.1 as `tools/pipeline.py --table cait:1` runs it: the re-training gets the LayerScale training's
    backbone.pth as --checkpoint and model.backbone.residual_scale_from=checkpoint; it trains from scratch (the
    other weights are not that file's) with those scales frozen, records the option as written (no path) and its
    own recipe; without --checkpoint it is refused in one line. One demo training (5 steps)."""
    import importlib.util
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from harness import demo_data
    from harness.experiment.cli import ConfigError, load_config

    repo = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location('vitbench_train_tool', repo / 'tools' / 'train.py')
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    learnt = create_model('vit_demo_patch8_64', img_size=32, global_pool='avg', init_values=0.1)
    with torch.no_grad():
        for g in gammas(learnt).values():
            g.uniform_(0.01, 0.5)
    scales = str(tmp_path / 'layerscale' / 'backbone.pth')
    os.makedirs(os.path.dirname(scales))
    save_checkpoint(scales, learnt, arch='vit_demo_patch8_64', overrides=dict(img_size=32, global_pool='avg'))
    options = ['model.backbone.init_values=0.1', 'model.backbone.residual_scale_trainable=False',
               'model.backbone.residual_scale_from=checkpoint', 'experiment.pretrain.recipe=supervised:fixed']
    with pytest.raises(ConfigError, match=r"residual_scale_from='checkpoint' takes the residual scales of "
                                          r'--checkpoint, and none was given'):
        load_config(train.parse_args(['configs/demo/sup_demo.py', '--cfg-options', *options]))

    assert demo_data.generate(demo_data.select(['imagenet']), str(tmp_path / 'data'), scale='tiny',
                              log=lambda m: None) == []
    data = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={tmp_path / "data" / "imagenet"}', 'num_workers=0', 'persistent_workers=False',
        'dataset.indices=40')]
    work_dir = tmp_path / 'fixed'
    result = subprocess.run(
        [sys.executable, 'tools/train.py', 'configs/demo/sup_demo.py', '--work-dir', str(work_dir), '--checkpoint',
         scales, '--cfg-options', *options, *data, 'train_dataloader.batch_size=8', 'val_dataloader.batch_size=20',
         'train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1'],
        cwd=repo, capture_output=True, text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    record = json.loads((work_dir / 'result.json').read_text())
    assert record['options']['model.backbone.residual_scale_from'] == 'checkpoint'
    assert record['pretrain']['recipe'] == 'supervised:fixed'  # its own pre-training, not the checkpoint's
    exported = torch.load(work_dir / 'backbone.pth', map_location='cpu')
    assert 'residual_scale_from' not in exported['overrides']  # the weights hold the scales; no path to follow
    trained = exported['state_dict']
    for name, g in gammas(learnt).items():
        assert torch.equal(trained[name], g), name  # the scales: the checkpoint's, and they did not train
    assert not torch.allclose(trained['blocks.0.mlp.fc1.weight'], learnt.blocks[0].mlp.fc1.weight)
