"""Checkpoint formats: official DeiT / DeiT III / parallel / hMLP / CaiT / MAE / MAE-lite files, timm,
mmengine and vitbench files load exactly; interpolation, head reset and clear errors."""
import argparse
import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from _backbone_helpers import (cait_official, deit3_official, mae_lite_official, mae_pretrain_official, randomize,
                               timm_model)
from backbones import CheckpointError, create_model, load_checkpoint, save_checkpoint

SMALL = dict(depth=2, img_size=64)
X = torch.randn(2, 3, 64, 64)


def _save(obj, tmp_path, name='ckpt.pth'):
    path = tmp_path / name
    torch.save(obj, path)
    return str(path)


def _close(a, b):
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)


@torch.no_grad()
def _logits(model):
    return model.eval()(X)


@pytest.mark.parametrize('name,overrides,to_official', [
    ('deit_small_patch16_224', {}, lambda sd: {'model': sd}),
    ('deit_small_distilled_patch16_224', {}, lambda sd: {'model': sd}),
    ('deit3_small_patch16_224', {}, deit3_official),
    ('deit3_small_patch16_18x2', {}, deit3_official),
    ('deit3_small_patch16_18x2', dict(init_values=None), deit3_official),
    ('cait_xxs24_224', {}, cait_official),
])
def test_official_deit_formats_load_exactly(name, overrides, to_official, tmp_path):
    # timm.create_model drops None arguments; init_values=0. is how it turns LayerScale off
    ref = timm_model(name, **SMALL, **{k: 0. if v is None else v for k, v in overrides.items()})
    path = _save(to_official(ref.state_dict()), tmp_path)
    ours = create_model(name, checkpoint=path, **SMALL, **overrides)
    _close(_logits(ours), _logits(ref))


def test_hmlp_stem_official_keys_round_trip(tmp_path):
    model = randomize(create_model('deit3_small_patch16_224', stem='hmlp', **SMALL)).eval()
    sd = model.state_dict()
    # the official hMLP_stem: Sequential(conv, norm, GELU, conv, norm, GELU, conv, norm)
    assert {'patch_embed.proj.0.weight', 'patch_embed.proj.1.running_var', 'patch_embed.proj.4.weight',
            'patch_embed.proj.7.bias'} <= set(sd)
    path = _save(deit3_official(sd), tmp_path)
    reloaded = create_model('deit3_small_patch16_224', stem='hmlp', checkpoint=path, **SMALL)
    _close(_logits(reloaded), _logits(model))


def test_mae_pretraining_file(tmp_path):
    ref = timm_model('vit_tiny12h_patch16_224', **SMALL)
    path = _save(mae_pretrain_official(ref.state_dict()), tmp_path)
    ours = create_model('vit_tiny12h_patch16_224', **SMALL)
    report = load_checkpoint(ours, path)
    assert report.source == 'facebookresearch/mae pre-training'
    assert any('decoder' in n for n in report.notes) and any('head' in n for n in report.notes)
    with torch.no_grad():
        _close(ours.eval().forward_features(X), ref.forward_features(X))
    # fine-tuning init with average pooling: the encoder's final norm is dropped, fc_norm starts fresh (MAE)
    ft = create_model('vit_tiny12h_patch16_224', global_pool='avg', **SMALL)
    notes = load_checkpoint(ft, path).notes
    assert any("'norm' dropped" in n for n in notes) and any('fc_norm' in n for n in notes)
    _close(ft.blocks[1].mlp.fc2.weight, ref.blocks[1].mlp.fc2.weight)


def test_mae_finetuned_file(tmp_path):
    ref = timm_model('vit_tiny12h_patch16_224', global_pool='avg', **SMALL)
    path = _save({'model': ref.state_dict()}, tmp_path)
    _close(_logits(create_model('vit_tiny12h_patch16_224', global_pool='avg', checkpoint=path, **SMALL)),
           _logits(ref))
    with pytest.raises(CheckpointError, match="global_pool='avg'"):
        create_model('vit_tiny12h_patch16_224', checkpoint=path, **SMALL)


@pytest.mark.parametrize('with_teacher', [False, True])
def test_mae_lite_file(with_teacher, tmp_path):
    ref = timm_model('vit_tiny12h_patch16_224', **SMALL)
    path = _save(mae_lite_official(ref.state_dict(), with_teacher), tmp_path)
    ours = create_model('vit_tiny12h_patch16_224', **SMALL)
    report = load_checkpoint(ours, path)
    assert report.source == 'MAE-lite pre-training'
    if with_teacher:
        assert any('tch_model' in n and 'attn_adapter' in n for n in report.notes)
    with torch.no_grad():
        _close(ours.eval().forward_features(X), ref.forward_features(X))


def test_mae_lite_finetuned_file(tmp_path):
    """MAE-lite fine-tuning saves the classifier as `model.<key>` with average pooling (fc_norm)."""
    ref = timm_model('vit_tiny12h_patch16_224', global_pool='avg', **SMALL)
    path = _save({'model': {'model.' + k: v for k, v in ref.state_dict().items()}, 'start_epoch': 300}, tmp_path)
    _close(_logits(create_model('vit_tiny12h_patch16_224', global_pool='avg', checkpoint=path, **SMALL)),
           _logits(ref))


def test_vitbench_format_round_trip(tmp_path):
    overrides = dict(SMALL, drop_path_rate=0.1, img_size=(64, 96))  # non-square training size
    model = randomize(create_model('deit3_small_patch16_224', **overrides))
    path = save_checkpoint(tmp_path / 'backbone.pth', model, overrides=overrides)
    raw = torch.load(path, map_location='cpu', weights_only=True)
    assert raw['vitbench_backbone'] == 1 and raw['arch'] == 'deit3_small_patch16_224'
    assert raw['meta']['pos_grid'] == [4, 6]
    x = torch.randn(1, 3, 64, 96)
    with torch.no_grad():
        _close(create_model(raw['arch'], checkpoint=path, **raw['overrides']).eval()(x), model.eval()(x))
    # the recorded grid makes the 4x6 table resizable although 24 rows are not a square
    square = create_model('deit3_small_patch16_224', checkpoint=path, **SMALL)
    assert square.pos_embed.shape == (1, 16, 384)


def test_save_checkpoint_rejects_non_plain_overrides(tmp_path):
    with pytest.raises(TypeError, match='overrides.norm'):
        save_checkpoint(tmp_path / 'b.pth', create_model('vit_demo_patch8_64'), overrides={'norm': torch.nn.LayerNorm})


def test_mmengine_runner_checkpoint(tmp_path):
    ref = timm_model('deit3_small_patch16_224', **SMALL)
    sd = {'backbone.' + k: v for k, v in ref.state_dict().items()}
    sd.update({'neck.proj.weight': torch.zeros(2, 2), 'data_preprocessor.mean': torch.zeros(3)})
    path = _save({'meta': {'epoch': 3}, 'state_dict': sd, 'message_hub': {}}, tmp_path)
    ours = create_model('deit3_small_patch16_224', **SMALL)
    notes = load_checkpoint(ours, path).notes
    assert any("'backbone.'" in n and 'neck' in n for n in notes)
    _close(_logits(ours), _logits(ref))


def test_pos_embed_interpolated_bicubic(tmp_path):
    ref = timm_model('deit_small_patch16_224', **SMALL)
    path = _save(ref.state_dict(), tmp_path)
    big = create_model('deit_small_patch16_224', depth=2, img_size=96, checkpoint=path)
    grid = ref.pos_embed[:, 1:].reshape(1, 4, 4, -1).permute(0, 3, 1, 2)
    expected = F.interpolate(grid, size=(6, 6), mode='bicubic', align_corners=False)
    _close(big.pos_embed[:, 1:], expected.permute(0, 2, 3, 1).reshape(1, 36, -1))
    _close(big.pos_embed[:, :1], ref.pos_embed[:, :1])
    # a model built at 64 run on 96x96 inputs interpolates the same way on the fly
    small = create_model('deit_small_patch16_224', checkpoint=path, **SMALL).eval()
    x = torch.randn(1, 3, 96, 96)
    with torch.no_grad():
        _close(small(x), big.eval()(x))


@pytest.mark.parametrize('source,no_embed_class', [('deit_small_patch16_224', True),
                                                   ('deit3_small_patch16_224', False)])
def test_class_token_position_conventions_convert_exactly(source, no_embed_class, tmp_path):
    """Position rows for the class token are folded into it (or added as zeros): same function."""
    ref = timm_model(source, **SMALL)
    path = _save(ref.state_dict(), tmp_path)
    ours = create_model(source, checkpoint=path, no_embed_class=no_embed_class, **SMALL)
    _close(_logits(ours), _logits(ref))


def test_head_of_another_size_is_reset(tmp_path):
    ref = timm_model('deit3_small_patch16_224', **SMALL)
    path = _save(ref.state_dict(), tmp_path)
    ours = create_model('deit3_small_patch16_224', num_classes=10, **SMALL)
    notes = load_checkpoint(ours, path).notes
    assert any("'head' dropped" in n and '1000 classes' in n for n in notes)
    assert ours.head.weight.shape == (10, 384)
    with torch.no_grad():
        _close(ours.eval().forward_features(X), ref.forward_features(X))


def test_mismatch_error_lists_missing_and_unexpected(tmp_path):
    path = _save(timm_model('deit3_small_patch16_224', **SMALL).state_dict(), tmp_path)
    with pytest.raises(CheckpointError) as e:
        create_model('deit3_small_patch16_224', depth=3, img_size=64, checkpoint=path)
    msg = str(e.value)
    assert path in msg and 'timm state dict' in msg
    assert 'missing from the checkpoint' in msg and 'blocks.2.attn.qkv.weight' in msg and 'depth' in msg
    with pytest.raises(CheckpointError, match=r'shape mismatches .*blocks\.0\.attn\.qkv\.weight'):
        create_model('deit3_base_patch16_224', checkpoint=path, **SMALL)
    with pytest.raises(CheckpointError, match='(?s)unexpected in the checkpoint .*ls1.gamma.*init_values'):
        create_model('deit_small_patch16_224', no_embed_class=True, checkpoint=path, **SMALL)


def test_distillation_token_mismatch_has_a_hint(tmp_path):
    path = _save({'model': timm_model('deit_small_distilled_patch16_224', **SMALL).state_dict()}, tmp_path)
    with pytest.raises(CheckpointError, match='distilled'):
        create_model('deit_small_patch16_224', checkpoint=path, **SMALL)


def test_full_training_checkpoint_is_refused_with_a_fix(tmp_path):
    sd = timm_model('deit_small_patch16_224', **SMALL).state_dict()
    path = _save({'model': sd, 'args': argparse.Namespace(lr=1e-3), 'epoch': 299}, tmp_path)
    with pytest.raises(CheckpointError) as e:
        create_model('deit_small_patch16_224', checkpoint=path, **SMALL)
    assert path in str(e.value) and 'argparse.Namespace' in str(e.value) and '--trust-pickle' in str(e.value)


def test_unreadable_inputs(tmp_path):
    with pytest.raises(FileNotFoundError, match='nope.pth'):
        create_model('vit_demo_patch8_64', checkpoint=str(tmp_path / 'nope.pth'))
    # a config's default weights (another run's export) say which run makes them
    with pytest.raises(FileNotFoundError, match=r'run .python tools/train.py configs/pretrain/deit3_small_in1k_800e.py'):
        create_model('vit_demo_patch8_64', checkpoint='work_dirs/deit3_small_in1k_800e/backbone.pth')
    with pytest.raises(CheckpointError, match='expected a dict'):
        create_model('vit_demo_patch8_64', checkpoint=_save([1, 2], tmp_path))


def _convert_tool():
    path = Path(__file__).resolve().parents[1] / 'tools' / 'convert_checkpoint.py'
    spec = importlib.util.spec_from_file_location('convert_checkpoint', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_convert_checkpoint_tool(tmp_path):
    tool = _convert_tool()
    ref = timm_model('deit3_small_patch16_18x2', **SMALL)
    src = _save(dict(deit3_official(ref.state_dict()), args=argparse.Namespace(model='x')), tmp_path, 'src.pth')
    dst = str(tmp_path / 'dst.pth')
    with pytest.raises(CheckpointError, match='--trust-pickle'):
        tool.main([src, dst])
    tool.main([src, dst, '--trust-pickle', '--arch', 'deit3_small_patch16_18x2', '--override', 'depth=2',
               '--override', 'img_size=64'])
    raw = torch.load(dst, weights_only=True)
    assert raw['overrides'] == {'depth': 2, 'img_size': 64, 'num_classes': 1000}
    _close(_logits(create_model(raw['arch'], checkpoint=dst, **raw['overrides'])), _logits(ref))
    # without --arch the keys are only renamed; the file still loads exactly
    dst2 = str(tmp_path / 'dst2.pth')
    tool.main([src, dst2, '--trust-pickle'])
    assert 'blocks.0.attns.1.ls.gamma' in torch.load(dst2, weights_only=True)['state_dict']
    _close(_logits(create_model('deit3_small_patch16_18x2', checkpoint=dst2, **SMALL)), _logits(ref))
