"""MAE: masking, the normalised-pixel target, the decoder, masking after the hMLP stem, and the distilled-MAE
attention loss."""
import pytest
import torch

import pretrain  # noqa: F401
from backbones import save_checkpoint
from pretrain.dmae import DistilledMAE, layer_pairs
from pretrain.mae import MAE, encode_visible, patchify, pixel_target, random_masking, sincos_pos_embed, unpatchify


pytestmark = pytest.mark.usefixtures('vitbench_scope')
DEMO = 'vit_demo_patch8_64'
LITE_DECODER = dict(embed_dim=96, depth=1, num_heads=3)


def test_masking_keeps_exactly_a_quarter_and_unshuffles():
    torch.manual_seed(0)
    B, L = 3, 196
    ids_keep, mask, ids_restore = random_masking(B, L, 0.75)
    assert ids_keep.shape == (B, 49) and (mask.sum(1) == L - 49).all()  # exactly 25% visible
    x = torch.randn(B, L, 5)
    visible = x.gather(1, ids_keep[..., None].expand(-1, -1, 5))
    # the visible tokens are the ones the mask marks 0, each once
    for b in range(B):
        assert sorted(ids_keep[b].tolist()) == torch.nonzero(mask[b] == 0).flatten().tolist()
    # [visible, anything for the masked] reordered with ids_restore puts every visible token back in place
    filled = torch.cat([visible, torch.zeros(B, L - 49, 5)], dim=1)
    restored = filled.gather(1, ids_restore[..., None].expand(-1, -1, 5))
    torch.testing.assert_close(restored, x * (1 - mask)[..., None])
    assert len({tuple(random_masking(1, L, 0.75)[0][0].tolist()) for _ in range(4)}) == 4  # random per call


def test_normalised_pixel_target_matches_the_formula():
    imgs = torch.randn(2, 3, 32, 32)
    target = pixel_target(imgs, 8)
    assert target.shape == (2, 16, 8 * 8 * 3)
    # patch (row 1, column 2) of image 0, pixels in (row, column, channel) order
    patch = imgs[0, :, 8:16, 16:24].permute(1, 2, 0).reshape(-1)
    expected = (patch - patch.mean()) / (patch.var() + 1e-6) ** .5  # var: unbiased, as MAE's
    torch.testing.assert_close(target[0, 1 * 4 + 2], expected)
    torch.testing.assert_close(unpatchify(patchify(imgs, 8), 8, (4, 4)), imgs)
    torch.testing.assert_close(pixel_target(imgs, 8, norm_pix=False), patchify(imgs, 8))


def test_decoder_predicts_every_patch():
    model = MAE(dict(arch=DEMO), decoder=LITE_DECODER)
    imgs = torch.randn(2, 3, 64, 64)
    pred, mask, ids_keep, _ = model.encode(imgs)
    assert pred.shape == (2, 64, 8 * 8 * 3) and mask.shape == (2, 64) and ids_keep.shape == (2, 16)
    losses = model(imgs, mode='loss')
    losses['loss'].backward()
    assert model.backbone.blocks[0].attn.qkv.weight.grad is not None
    assert not model.backbone.pos_embed.requires_grad and not model.decoder.pos_embed.requires_grad
    # other input sizes work (position tables are resized)
    assert model.encode(torch.randn(1, 3, 48, 48))[0].shape == (1, 36, 192)


def test_sincos_table_is_mae_s():
    table = sincos_pos_embed(8, (2, 3), num_prefix=1)
    assert table.shape == (1, 7, 8) and (table[0, 0] == 0).all()
    # first half: column position; second half: row position (first quarter of each half: sin at omega=1)
    row, col = 1, 2
    torch.testing.assert_close(table[0, 1 + row * 3 + col, 0], torch.tensor(float(torch.sin(torch.tensor(2.)))))
    torch.testing.assert_close(table[0, 1 + row * 3 + col, 4], torch.tensor(float(torch.sin(torch.tensor(1.)))))


def test_masking_after_the_hmlp_stem_equals_masking_pixels():
    """The hMLP stem never mixes patches: the encoder input of a visible patch does not depend on the others."""
    model = MAE(dict(arch='deit3_small_patch16_224', stem='hmlp', depth=1), decoder=LITE_DECODER).eval()
    imgs = torch.randn(2, 3, 64, 64)
    ids_keep, _, _ = random_masking(2, 16, 0.75)
    scrambled = imgs.clone()
    visible = torch.zeros(2, 16, dtype=torch.bool).scatter_(1, ids_keep, True)
    for b, i in torch.nonzero(~visible).tolist():  # overwrite every masked patch's pixels
        r, c = divmod(i, 4)
        scrambled[b, :, 16 * r:16 * r + 16, 16 * c:16 * c + 16] = torch.randn(3, 16, 16)
    with torch.no_grad():
        a, _ = encode_visible(model.backbone, imgs, ids_keep)
        b, _ = encode_visible(model.backbone, scrambled, ids_keep)
    torch.testing.assert_close(a, b)


def test_mae_needs_a_plain_vit():
    """The capabilities of the family contract (backbones/contract.py), not a class, each refusal in one line."""
    with pytest.raises(ValueError, match=r"needs the capability 'class_token' \(a class token .*\), which CaiT lacks$"):
        MAE(dict(arch='cait_xxs24_224', depth=1))  # its class token joins after the trunk
    with pytest.raises(ValueError, match="'class_token'.*which VisionTransformer lacks"):
        MAE(dict(arch='deit_tiny_distilled_patch16_224', depth=1))  # two prefix tokens
    with pytest.raises(ValueError, match="global_pool='avg'"):  # its final norm would be fc_norm, after pooling
        MAE(dict(arch=DEMO, global_pool='avg', depth=1))
    with pytest.raises(ValueError, match='fc_norm'):  # a norm after pooling with the class token: the same
        MAE(dict(arch=DEMO, fc_norm=True, depth=1))
    with pytest.raises(ValueError, match=r"the capability 'keep' \(.*global attention without windows"):
        MAE(dict(arch=DEMO, window_size=4, global_attn_indexes=[1], depth=2))


# ------------------------------------------------------------------------------------------ distilled MAE
@pytest.fixture()
def twin(tmp_path):
    """A student and a teacher with the same weights (the teacher saved from the student's encoder)."""
    torch.manual_seed(0)
    mae = MAE(dict(arch=DEMO), decoder=LITE_DECODER)
    path = save_checkpoint(str(tmp_path / 'teacher.pth'), mae.backbone, arch=DEMO)
    torch.manual_seed(0)  # DistilledMAE builds its MAE part first: the same student weights
    model = DistilledMAE(dict(arch=DEMO), teacher=dict(checkpoint=path), decoder=LITE_DECODER)
    assert model.pairs == [(5, 5)]  # default: the last block of both
    torch.testing.assert_close(model.backbone.blocks[0].attn.qkv.weight, model.teacher.blocks[0].attn.qkv.weight)
    return model


def test_attention_loss_is_zero_for_identical_models_and_trains_m(twin):
    with torch.no_grad():
        twin.head_maps[0].weight.copy_(torch.eye(3)[..., None, None])  # M = identity
    imgs = torch.randn(2, 3, 64, 64)
    losses = twin(imgs, mode='loss')
    assert losses['loss_attn_s5_t5'].item() == pytest.approx(0., abs=1e-10)
    assert losses['loss_rec'] > 0
    with torch.no_grad():
        twin.head_maps[0].weight.add_(0.1 * torch.randn(3, 3, 1, 1))
    losses = twin(imgs, mode='loss')
    assert losses['loss_attn_s5_t5'] > 0
    sum(losses.values()).backward()
    assert twin.head_maps[0].weight.grad.abs().sum() > 0  # gradients reach M ...
    assert twin.backbone.blocks[5].attn.qkv.weight.grad.abs().sum() > 0  # ... and the student
    assert all(p.grad is None and not p.requires_grad for p in twin.teacher.parameters())  # not the teacher


def test_teacher_sees_the_same_visible_patches_and_stays_out_of_checkpoints(twin):
    imgs = torch.randn(2, 3, 64, 64)
    ids_keep, _, _ = random_masking(2, 64, 0.75)
    _, student = encode_visible(twin.backbone, imgs, ids_keep, [5])
    captured = {}
    original = twin.teacher.blocks[5].forward

    def spy(x, **kwargs):
        captured['tokens'] = x.shape[1]
        return original(x, **kwargs)
    twin.teacher.blocks[5].forward = spy
    losses = twin.distillation_losses(imgs, ids_keep, student)
    assert captured['tokens'] == 1 + 16  # class token + the student's 16 visible patches
    assert losses['loss_attn_s5_t5'] > 0
    assert not any(k.startswith('teacher') or '_teacher' in k for k in twin.state_dict())
    assert twin.train().teacher.training is False


def test_layer_pairs():
    assert layer_pairs([-1], 12, 12) == [(11, 11)]
    assert layer_pairs('all', 3, 3) == [(0, 0), (1, 1), (2, 2)]
    assert layer_pairs('all', 3, 6) == [(0, 1), (1, 3), (2, 5)] and layer_pairs('all', 4, 2) == [(0, 0), (1, 0), (2, 1),
                                                                                              (3, 1)]
    assert layer_pairs([(5, 11), 3], 6, 12) == [(5, 11), (3, 3)]
    with pytest.raises(ValueError, match='out of range for the student'):
        layer_pairs([6], 6, 12)


# ------------------------------------------------------------------------- distilled MAE: hidden states
def hidden_twin(tmp_path, **kwargs):
    """A student whose teacher has its weights, distilling hidden states 3 and 6 (the final norm) only."""
    torch.manual_seed(0)
    mae = MAE(dict(arch=DEMO), decoder=LITE_DECODER)
    path = save_checkpoint(str(tmp_path / 'teacher.pth'), mae.backbone, arch=DEMO)
    torch.manual_seed(0)
    return DistilledMAE(dict(arch=DEMO), teacher=dict(checkpoint=path), decoder=LITE_DECODER, distill_layers=[],
                        distill_hidden_layers=[3, -1], **kwargs)


def test_hidden_states_are_the_official_ones():
    """h < depth: block h's norm1 of its input (h = 0: the embedded tokens); h = depth: the final norm's output."""
    model = MAE(dict(arch=DEMO), decoder=LITE_DECODER).eval()
    vit, imgs = model.backbone, torch.randn(2, 3, 64, 64)
    ids_keep, _, _ = random_masking(2, 64, 0.75)
    with torch.no_grad():
        out, taps = encode_visible(vit, imgs, ids_keep, hidden_layers=[0, 2, 6])
        tokens, _ = vit.patch_embed(imgs)
        x = torch.cat([vit.cls_token.expand(2, -1, -1) + vit.pos_embed[:, :1],
                       (tokens + vit.pos_embed[:, 1:]).gather(1, ids_keep[..., None].expand(-1, -1, 192))], dim=1)
        torch.testing.assert_close(taps['hidden'][0], vit.blocks[0].norm1(x))
        x = vit.blocks[1](vit.blocks[0](x))
        torch.testing.assert_close(taps['hidden'][2], vit.blocks[2].norm1(x))
    assert taps['hidden'][6] is out and taps['attn'] == {}


def test_hidden_loss_is_zero_for_identical_models_and_trains_adapter_and_student_only(tmp_path):
    model = hidden_twin(tmp_path)
    assert model.hidden_pairs == [(3, 3), (6, 6)] and model.pairs == [] and len(model.head_maps) == 0
    with torch.no_grad():
        for adapter in model.hidden_adapters:
            adapter.weight.copy_(torch.eye(192))
    imgs = torch.randn(2, 3, 64, 64)
    losses = model(imgs, mode='loss')
    assert set(losses) == {'loss_rec', 'loss_hidden_s3_t3', 'loss_hidden_s6_t6'}
    assert losses['loss_hidden_s3_t3'].item() == pytest.approx(0., abs=1e-10)
    assert losses['loss_hidden_s6_t6'].item() == pytest.approx(0., abs=1e-10)
    with torch.no_grad():
        model.hidden_adapters[0].weight.add_(0.05 * torch.randn(192, 192))
    losses = model(imgs, mode='loss')
    assert losses['loss_hidden_s3_t3'] > 0 and losses['loss_hidden_s6_t6'].item() == pytest.approx(0., abs=1e-10)
    losses['loss_hidden_s3_t3'].backward()
    assert model.hidden_adapters[0].weight.grad.abs().sum() > 0  # the adapter ...
    assert model.backbone.blocks[2].mlp.fc2.weight.grad.abs().sum() > 0  # ... and the student below block 3
    assert model.backbone.blocks[3].mlp.fc2.weight.grad is None  # nothing above the distilled state
    assert model.decoder.pred.weight.grad is None
    assert all(p.grad is None and not p.requires_grad for p in model.teacher.parameters())  # never the teacher


def test_hidden_distillation_with_a_wider_teacher_and_both_targets(tmp_path):
    teacher = save_checkpoint(str(tmp_path / 'wide.pth'), MAE(dict(arch=DEMO, embed_dim=256, num_heads=4, depth=4),
                                                              decoder=LITE_DECODER).backbone,
                              arch=DEMO, overrides=dict(embed_dim=256, num_heads=4, depth=4))
    model = DistilledMAE(dict(arch=DEMO), teacher=dict(checkpoint=teacher), decoder=LITE_DECODER,
                         distill_layers=[(5, 3)], distill_hidden_layers=[(6, 4), (1, 2)], hidden_alpha=0.5)
    assert [tuple(a.weight.shape) for a in model.hidden_adapters] == [(256, 192), (256, 192)]
    losses = model(torch.randn(2, 3, 64, 64), mode='loss')
    assert {'loss_attn_s5_t3', 'loss_hidden_s6_t4', 'loss_hidden_s1_t2'} <= set(losses)
    with pytest.raises(ValueError, match='distill_hidden_layers: hidden state 5 is out of range for the teacher'):
        DistilledMAE(dict(arch=DEMO), teacher=dict(checkpoint=teacher), decoder=LITE_DECODER,
                     distill_hidden_layers=[(0, 5)])
    with pytest.raises(ValueError, match='both empty'):
        DistilledMAE(dict(arch=DEMO), teacher=dict(checkpoint=teacher), decoder=LITE_DECODER, distill_layers=[])
