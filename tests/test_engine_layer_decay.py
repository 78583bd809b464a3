"""Layer-wise LR decay assigns d ** (num_layers + 1 - layer_id) per backbone layer, 1 outside it."""
import pytest
import torch.nn as nn
from mmengine.optim import build_optim_wrapper

from backbones import create_model


class Classifier(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(backbone.embed_dim, 5)


@pytest.mark.parametrize('arch', ['vit_demo_patch8_64', 'cait_xxs24_224'])
def test_lr_scale_per_layer(arch):
    model = Classifier(create_model(arch, num_classes=0, depth=3) if arch.startswith('vit')
                       else create_model(arch, num_classes=0, depth=3, img_size=32))
    wrapper = build_optim_wrapper(model, dict(
        optimizer=dict(type='AdamW', lr=1.0, weight_decay=0.05),
        constructor='vitbench.LayerDecayOptimWrapperConstructor', paramwise_cfg=dict(layer_decay_rate=0.5)))
    top = model.backbone.num_layers + 1
    lr_of = {name: group['lr'] for group in wrapper.optimizer.param_groups for name in group['param_names']}
    wd_of = {name: group['weight_decay'] for group in wrapper.optimizer.param_groups
             for name in group['param_names']}
    assert lr_of['backbone.patch_embed.proj.weight'] == pytest.approx(0.5 ** top)   # embeddings
    assert lr_of['backbone.pos_embed'] == pytest.approx(0.5 ** top)
    assert lr_of['backbone.blocks.0.attn.qkv.weight'] == pytest.approx(0.5 ** (top - 1))
    assert lr_of['backbone.blocks.2.mlp.fc2.weight'] == pytest.approx(0.5 ** (top - 3))
    assert lr_of['head.weight'] == 1.0 and lr_of['backbone.norm.weight'] == 1.0
    assert wd_of['backbone.blocks.0.attn.qkv.weight'] == 0.05 and wd_of['head.weight'] == 0.05
    assert wd_of['backbone.pos_embed'] == wd_of['backbone.cls_token'] == wd_of['head.bias'] == 0.0
    assert len(lr_of) == sum(1 for p in model.parameters() if p.requires_grad)


def test_a_model_without_a_vitbench_backbone_is_refused():
    with pytest.raises(TypeError, match='get_layer_id'):
        build_optim_wrapper(nn.Sequential(nn.Linear(2, 2)), dict(
            optimizer=dict(type='SGD', lr=0.1), constructor='vitbench.LayerDecayOptimWrapperConstructor',
            paramwise_cfg=dict(layer_decay_rate=0.5, backbone='')))


def test_every_parameter_of_every_variant_has_a_layer_and_an_unknown_one_is_refused():
    """No parameter falls into the top layer's group by accident: every parameter of every named variant, as a
    classifier (average pooling too) and as a ViTDet dense backbone, has a layer by the rule; a parameter the rule
    does not know (a new top-level module) is an error naming it, not the top layer's rate."""
    import torch
    from backbones import ViTBackbone, list_models
    for name in list_models():
        with torch.device('meta'):  # no memory: ViT-H and CaiT-M36 too
            models = [create_model(name, num_classes=10)]
            if name.startswith(('deit_', 'deit3_')) and 'distilled' not in name:
                models.append(create_model(name, num_classes=10, global_pool='avg'))
        for model in models:
            top = model.num_layers + 1
            ids = {n: model.get_layer_id(n) for n, _ in model.named_parameters()}
            assert set(ids.values()) <= set(range(top + 1)) and max(ids.values()) == top, name
    dense = ViTBackbone(arch='vit_demo_patch8_64', img_size=64, window_size=4, global_attn_indexes=[5],
                        use_rel_pos=True, out_indices=[5])
    assert {dense.get_layer_id(n) for n, _ in dense.named_parameters() if 'rel_pos' in n} == set(range(1, 7))
    model = create_model('vit_demo_patch8_64', num_classes=10)
    model.register_tokens = nn.Parameter(model.cls_token.detach().clone())
    with pytest.raises(KeyError, match="register_tokens: get_layer_id of VisionTransformer knows no layer for it"):
        model.get_layer_id('register_tokens')
