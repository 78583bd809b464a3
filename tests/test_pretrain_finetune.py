"""ImageNet fine-tuning: exactly the intended parameters train (attention-only, linear probe), frozen norms
stay frozen, layer decay sees only the trainable ones, resolution fine-tuning loads a 224 checkpoint at 384,
and DeiT distillation trains the distillation head against a frozen teacher."""
import re

import pytest
import torch
from mmengine.optim import build_optim_wrapper

import pretrain  # noqa: F401
from backbones import create_model, save_checkpoint
from pretrain import ImageClassifier
from pretrain.finetune import trainable_names


pytestmark = pytest.mark.usefixtures('vitbench_scope')


def expected_attention_only(names):
    """The rule of docs/recipes.md ("Fine-tuning"), written independently of pretrain/finetune.py."""
    keep = []
    for n in names:
        parts = n.split('.')
        if n == 'pos_embed' or parts[0] in ('head', 'head_dist'):
            keep.append(n)
        elif parts[0] in ('blocks', 'blocks_token_only') and (
                parts[2] == 'attn' or parts[2] == 'attns' and parts[4] == 'attn'):
            keep.append(n)  # blocks.i.attn.* and blocks.i.attns.j.attn.*
    return keep


@pytest.mark.parametrize('arch, kwargs', [
    ('deit3_small_patch16_224', {}),
    ('deit3_small_patch16_18x2', {}),  # parallel: both attention branches
    ('deit_tiny_distilled_patch16_224', {}),  # two heads
    ('vit_tiny12h_patch16_224', dict(global_pool='avg', stem='hmlp')),
])
def test_attention_only_trains_exactly_qkv_proj_pos_embed_and_head(arch, kwargs):
    model = ImageClassifier(dict(arch=arch, depth=2, **kwargs), num_classes=10, trainable='attention')
    names = [n for n, _ in model.backbone.named_parameters()]
    trained = sorted(n for n, p in model.backbone.named_parameters() if p.requires_grad)
    assert trained == sorted(expected_attention_only(names))
    per_block = {re.sub(r'^blocks\.\d+\.', '', n) for n in trained if n.startswith('blocks.')}
    branches = ['attns.0.', 'attns.1.'] if 'x2' in arch else ['']
    assert per_block == {f'{b}attn.{layer}.{p}' for b in branches for layer in ('qkv', 'proj')
                         for p in ('weight', 'bias')}
    frozen = set(names) - set(trained)
    assert {'cls_token', 'patch_embed.proj.0.weight' if 'stem' in kwargs else 'patch_embed.proj.weight'} <= frozen
    assert not any(re.search(r'mlp|norm|\.ls\d?\.|gamma', n) for n in trained)


def test_cait_class_attention_counts_as_attention():
    names = trainable_names(create_model('cait_xxs24_224', depth=1, num_classes=10), 'attention')
    assert 'blocks_token_only.0.attn.q.weight' in names and 'blocks.0.attn.qkv.weight' in names
    assert not any('mlp' in n or 'norm' in n for n in names)


def test_attention_is_about_a_third_of_the_weights():
    model = ImageClassifier(dict(arch='deit3_base_patch16_224', depth=1), num_classes=1000, trainable='attention')
    blocks = model.backbone.blocks[0]
    attn = sum(p.numel() for p in blocks.attn.parameters())
    assert 0.32 < attn / sum(p.numel() for p in blocks.parameters()) < 0.34  # FFN holds twice as many


def test_linear_probe_trains_the_head_and_keeps_frozen_batchnorm_in_eval():
    model = ImageClassifier(dict(arch='deit3_small_patch16_224', depth=1, stem='hmlp'), num_classes=10,
                            trainable='linear', probe_norm=True)
    assert sorted(n for n, p in model.named_parameters() if p.requires_grad) == ['backbone.head.bias',
                                                                                 'backbone.head.weight']
    model.train()
    assert not model.backbone.patch_embed.proj[1].training  # stem BatchNorm keeps the checkpoint statistics
    assert model.probe_norm.training  # the probe's own BatchNorm learns its statistics
    out = model(torch.randn(4, 3, 32, 32), dict(gt_label=torch.arange(4)), mode='loss')
    out['loss_cls'].backward()


def test_layer_decay_optimizer_gets_only_trainable_parameters():
    model = ImageClassifier(dict(arch='vit_demo_patch8_64'), num_classes=10, trainable='attention')
    wrapper = build_optim_wrapper(model, dict(
        optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05),
        constructor='LayerDecayOptimWrapperConstructor', paramwise_cfg=dict(layer_decay_rate=0.75)))
    in_optimizer = {n for g in wrapper.optimizer.param_groups for n in g['param_names']}
    assert in_optimizer == {f'backbone.{n}' for n in model.trainable_names}
    scales = {n: g['lr_scale'] for g in wrapper.optimizer.param_groups for n in g['param_names']}
    assert scales['backbone.head.weight'] == 1.0 and scales['backbone.pos_embed'] == pytest.approx(0.75 ** 7)


def test_resolution_fine_tuning_loads_a_224_checkpoint_at_384(tmp_path):
    source = create_model('deit3_small_patch16_224', depth=1)
    path = save_checkpoint(str(tmp_path / 'backbone.pth'), source, overrides=dict(depth=1),
                           meta=dict(pretrain=dict(recipe='supervised', epochs=1)))
    model = ImageClassifier(dict(arch='deit3_small_patch16_224', depth=1, img_size=384,
                                 init_cfg=dict(type='Pretrained', checkpoint=path)), trainable='attention')
    model.init_weights()
    assert model.backbone.pos_embed.shape == (1, 24 * 24, 384)
    torch.testing.assert_close(model.backbone.blocks[0].mlp.fc1.weight, source.blocks[0].mlp.fc1.weight)
    assert model(torch.randn(1, 3, 384, 384)).shape == (1, 1000)


def test_deit_distillation_trains_the_distillation_head_against_a_frozen_teacher(tmp_path):
    teacher = create_model('deit3_small_patch16_224', depth=1, num_classes=10)
    path = save_checkpoint(str(tmp_path / 'teacher.pth'), teacher, overrides=dict(depth=1))
    model = ImageClassifier(dict(arch='deit_tiny_distilled_patch16_224', depth=1), num_classes=10,
                            distillation=dict(teacher=dict(checkpoint=path), kind='hard', alpha=0.5))
    x, samples = torch.randn(2, 3, 32, 32), dict(gt_label=torch.tensor([1, 2]))
    losses = model.train()(x, samples, mode='loss')
    assert set(losses) == {'loss_cls', 'loss_dist'}
    sum(losses.values()).backward()
    assert model.backbone.head_dist.weight.grad.abs().sum() > 0 and model.backbone.head.weight.grad.abs().sum() > 0
    assert model.teacher is not None and not model.teacher.training
    assert not any(k.startswith('teacher') for k in model.state_dict())
    assert len(model.eval()(x, samples, mode='predict')) == 2  # evaluation: the mean of both heads
    with pytest.raises(FileNotFoundError, match='missing.pth'):
        ImageClassifier(dict(arch='vit_demo_patch8_64'), num_classes=10,
                        distillation=dict(teacher=dict(checkpoint=str(tmp_path / 'missing.pth'))))


def test_timm_teacher_loads_frozen_in_eval(tmp_path):
    import timm

    from pretrain.teacher import build_teacher
    path = tmp_path / 'resnet.pth'
    torch.save(timm.create_model('resnet10t', num_classes=10).state_dict(), path)
    teacher = build_teacher(dict(source='timm', name='resnet10t', checkpoint=str(path)), num_classes=10)
    assert not teacher.training and not any(p.requires_grad for p in teacher.parameters())
    assert teacher(torch.randn(2, 3, 32, 32)).shape == (2, 10)


def test_training_everything_leaves_what_the_backbone_froze_frozen():
    # CaiT §4.1: LayerScale frozen by the backbone (residual_scale_trainable=False) stays frozen under trainable='all'
    model = ImageClassifier(dict(arch='vit_demo_patch8_64', depth=2, init_values=0.1, residual_scale_trainable=False),
                            num_classes=10)
    frozen = sorted(n for n, p in model.backbone.named_parameters() if not p.requires_grad)
    assert frozen == [f'blocks.{i}.ls{j}.gamma' for i in range(2) for j in (1, 2)]
    assert sorted(model.trainable_names) == sorted(n for n, _ in model.backbone.named_parameters() if n not in frozen)
