"""BEiT's relative position bias as an option of the ViT family (``rel_pos_bias=True``,
backbones/layers/beit_rel_pos.py): the same numbers as timm's BEiT attention on the same weights, zero at start so
that a checkpoint without the tables computes what it computed before, and only offsets the table holds."""
import pytest
import torch
from timm.models.beit import Attention as TimmBeitAttention

from backbones import create_model
from backbones.layers.attention import Attention
from backbones.layers.beit_rel_pos import beit_index


def _pair(dim=48, heads=4, grid=(3, 4)):
    torch.manual_seed(0)
    ours = Attention(dim, heads, qkv_bias=True, rel_pos_size=grid, rel_pos_kind='beit').eval()
    ref = TimmBeitAttention(dim, heads, qkv_bias=True, window_size=grid).eval()
    with torch.no_grad():
        ours.qkv.bias[dim:2 * dim].zero_()  # BEiT has no key bias
        ref.qkv.weight.copy_(ours.qkv.weight)
        ref.q_bias.copy_(ours.qkv.bias[:dim])
        ref.v_bias.copy_(ours.qkv.bias[2 * dim:])
        ref.proj.load_state_dict(ours.proj.state_dict())
        table = torch.randn_like(ours.relative_position_bias_table)
        ours.relative_position_bias_table.copy_(table)
        ref.relative_position_bias_table.copy_(table)
    return ours, ref


def test_the_bias_is_timms_beit_attention_on_the_same_weights():
    ours, ref = _pair()
    assert torch.equal(beit_index((3, 4), (3, 4), 1), ref.relative_position_index)
    x = torch.randn(2, 1 + 12, 48)
    assert torch.allclose(ours(x, grid=(3, 4), num_prefix_tokens=1), ref(x), atol=1e-5)
    # only the class token's queries (the head reads them): its bias rows too
    assert torch.allclose(ours(x, grid=(3, 4), num_prefix_tokens=1, num_queries=1), ref(x)[:, :1], atol=1e-5)


def test_a_smaller_grid_reads_its_own_offsets_and_a_larger_one_is_refused():
    full, part = beit_index((3, 4), (3, 4), 1), beit_index((3, 4), (2, 3), 1)
    tokens = torch.tensor([0] + [1 + 4 * i + j for i in range(2) for j in range(3)])  # the 2x3 corner of 3x4
    assert torch.equal(part, full[tokens][:, tokens])
    with pytest.raises(ValueError, match='larger than the 3x4 grid'):
        beit_index((3, 4), (4, 4), 1)


def test_zero_tables_change_nothing_and_a_checkpoint_without_them_loads():
    torch.manual_seed(0)
    plain = create_model('vit_demo_patch8_64', num_classes=0).eval()
    biased = create_model('vit_demo_patch8_64', num_classes=0, rel_pos_bias=True).eval()
    missing = biased.load_state_dict(plain.state_dict(), strict=False).missing_keys
    assert missing and all(k.endswith('relative_position_bias_table') for k in missing)
    assert all(k in biased.checkpoint_may_miss for k in missing)
    x = torch.randn(2, 3, 64, 64)
    assert torch.allclose(biased(x), plain(x), atol=1e-5)  # a zero float mask: SDPA's masked kernel, same numbers
    with pytest.raises(ValueError, match="rel_pos_bias \\(BEiT's\\)"):
        create_model('vit_demo_patch8_64', rel_pos_bias=True, use_rel_pos=True)


def test_the_beit_protocol_turns_it_on_and_refuses_a_family_without_it():
    """upernet_beit160k builds the bias in every block (its digest fixes it); a swap to a family with no form of
    it is one line, not a TypeError from its constructor."""
    from mmengine.config import Config

    from downstream.backbone_swap import swap_backbone
    cfg = Config.fromfile('configs/upernet_vit_tiny12h_mae.py')
    assert cfg.model.backbone.rel_pos_bias is True
    assert 'model.backbone.rel_pos_bias' in cfg.experiment.protocol.settings
    swap_backbone(cfg, 'deit3_small_patch16_224')  # the ViT family keeps it
    assert cfg.model.backbone.rel_pos_bias is True
    cfg = Config.fromfile('configs/upernet_vit_tiny12h_mae.py')
    with pytest.raises(ValueError, match="cait_s24_224: this protocol turns on BEiT's relative position bias"):
        swap_backbone(cfg, 'cait_s24_224')
