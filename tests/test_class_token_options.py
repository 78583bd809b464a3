"""Where the class token joins a ViT (CaiT Table 2 / thesis Table 3.13): late insertion into self-attention
(``cls_insert_layer``), a class-attention stage (``depth_token_only``), and talking-heads attention (Table 4),
each against an independent computation: a ViT without class token for the patches, timm's CaiT class-attention
block for the stage."""
import pytest
import torch
from timm.models.cait import LayerScaleBlockClassAttn

from backbones import create_model

TINY = dict(img_size=32, patch_size=8, embed_dim=32, depth=4, num_heads=2, num_classes=5)


def tiny(**kwargs):
    torch.manual_seed(0)
    return create_model('vit_demo_patch8_64', **dict(TINY, **kwargs)).eval()


def patches_after(model, imgs, blocks):
    """The patch tokens after ``blocks`` blocks of a ViT without class token holding ``model``'s weights."""
    twin = create_model('vit_demo_patch8_64', **dict(TINY, class_token=False, global_pool='avg')).eval()
    state = {k: (v[:, 1:] if k == 'pos_embed' else v) for k, v in model.state_dict().items()
             if k != 'cls_token' and not k.startswith(('blocks_token_only', 'norm', 'head'))}
    twin.load_state_dict(state, strict=False)
    return [h.tokens for h in twin.iter_hidden(imgs)][blocks]


@pytest.mark.parametrize('k', [1, 3])
def test_a_late_class_token_joins_before_block_k(k):
    model = tiny(cls_insert_layer=k)
    imgs = torch.randn(2, 3, 32, 32)
    x = torch.cat([(model.cls_token + model.pos_embed[:, :1]).expand(2, -1, -1), patches_after(model, imgs, k)], 1)
    for blk in model.blocks[k:]:
        assert blk.held_prefix == 0
        x = blk(x)
    torch.testing.assert_close(model(imgs), model.head(model.norm(x)[:, 0]))
    assert [blk.held_prefix for blk in model.blocks] == [1] * k + [0] * (4 - k)


def test_the_class_attention_stage_is_cait_class_attention_over_the_frozen_patches():
    model = tiny(depth_token_only=2)
    imgs = torch.randn(2, 3, 32, 32)
    patches = patches_after(model, imgs, 4)
    cls = (model.cls_token + model.pos_embed[:, :1]).expand(2, -1, -1)
    for blk in model.blocks_token_only:  # timm's CaiT block without LayerScale (gamma = 1)
        ref = LayerScaleBlockClassAttn(32, 2, qkv_bias=True, init_values=1.,
                                       norm_layer=lambda d, **kw: torch.nn.LayerNorm(d, eps=1e-6, **kw))
        state = blk.state_dict()
        state.update({'gamma_1': torch.ones(32), 'gamma_2': torch.ones(32)})
        ref.load_state_dict(state)
        cls = ref(patches, cls)
    torch.testing.assert_close(model(imgs), model.head(model.norm(cls)[:, 0]))
    # what the map reads: the class-attention blocks are layers of their own (layer-wise decay, counting)
    assert model.num_layers == 6 and model.get_layer_id('blocks_token_only.1.mlp.fc1.weight') == 6
    assert model.forward_features(imgs).shape == (2, 17, 32)


def test_the_class_token_options_refuse_what_they_cannot_place():
    for kwargs, message in [
            (dict(cls_insert_layer=4), r'cls_insert_layer must be in \[0, depth - 1\]'),
            (dict(cls_insert_layer=2, depth_token_only=2), 'set one of them'),
            (dict(depth_token_only=1, class_token=False, global_pool='avg'), 'need class_token=True'),
            (dict(depth_token_only=1, distilled=True), 'a distilled model'),
            (dict(attn_layer='talking_heads', window_size=2), 'attends globally'),
            (dict(attn_layer='bogus'), 'attn_layer must be one of')]:
        with pytest.raises(ValueError, match=message):
            tiny(**kwargs)


def test_talking_heads_in_the_vit_is_cait_attention():
    model = tiny(attn_layer='talking_heads')
    attn = model.blocks[0].attn
    assert type(attn).__name__ == 'TalkingHeadAttention' and tuple(attn.proj_l.weight.shape) == (2, 2)
    imgs = torch.randn(2, 3, 32, 32)
    x, _ = model._trunk_input(imgs)
    for blk in model.blocks:
        x = blk(x)
    torch.testing.assert_close(model(imgs), model.head(model.norm(x)[:, 0]))


def test_a_distillation_token_in_cait_class_attention_queries_beside_the_class_token():
    # thesis Table 3.14: the distillation token joins the class token at the input of the class-attention stage;
    # each of the two queries attends over both tokens and the patches, as timm's CaiT block does for its one query
    torch.manual_seed(0)
    model = create_model('cait_xxs24_224', img_size=32, patch_size=8, embed_dim=32, depth=2, num_heads=2,
                         num_classes=5, distilled=True, init_values=0.5).eval()
    with torch.no_grad():
        model.cls_token.normal_()
        model.dist_token.normal_()
    imgs = torch.randn(2, 3, 32, 32)
    patches = model.last_hidden(imgs).tokens
    cls, dist = (t.expand(2, -1, -1) for t in (model.cls_token, model.dist_token))
    for blk in model.blocks_token_only:
        ref = LayerScaleBlockClassAttn(32, 2, qkv_bias=True, init_values=0.5,
                                       norm_layer=lambda d, **kw: torch.nn.LayerNorm(d, eps=1e-6, **kw))
        state = {k.replace('ls1.gamma', 'gamma_1').replace('ls2.gamma', 'gamma_2'): v
                 for k, v in blk.state_dict().items()}
        ref.load_state_dict(state)
        cls, dist = ref(torch.cat([dist, patches], 1), cls), ref(torch.cat([cls, patches], 1), dist)
    tokens = model.norm(torch.cat([cls, dist], 1))
    logits, logits_dist = model.forward_heads(imgs)
    torch.testing.assert_close(logits, model.head(tokens[:, 0]))
    torch.testing.assert_close(logits_dist, model.head_dist(tokens[:, 1]))
    torch.testing.assert_close(model(imgs), (logits + logits_dist) / 2)  # eval: the mean of the two heads
    with pytest.raises(ValueError, match='needs depth_token_only > 0'):
        create_model('cait_xxs24_224', depth_token_only=0, global_pool='', distilled=True)
