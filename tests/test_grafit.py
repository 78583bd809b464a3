"""Grafit (pretrain/grafit.py): its losses against hand-computed cases, the memory update, the model's switches
(Grafit, Grafit FC, SNCA+, the baseline, the triplet proxy) on the demo ViT and timm's ResNet-18, and the CIFAR-100
coarse level it trains on."""
import math

import pytest
import torch
import torch.nn.functional as F

from pretrain.grafit import Grafit, instance_loss, knn_loss, triplet_loss


def test_knn_loss_hand_computed_case():
    # one query along x; memory: itself (index 0, left out), cos 1 (label 1), cos 0 (label 0), cos -1 (label 1),
    # and an entry never seen (label -1, left out)
    memory = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 0.0]])
    memory_labels = torch.tensor([1, 1, 0, 1, -1])
    sigma = 0.5
    loss = knn_loss(torch.tensor([[3.0, 0.0]]), torch.tensor([1]), memory, memory_labels, torch.tensor([0]), sigma)
    e = [math.exp(c / sigma) for c in (1.0, 0.0, -1.0)]
    assert loss.item() == pytest.approx(-math.log((e[0] + e[2]) / sum(e)), rel=1e-5)  # float32


def test_instance_loss_hand_computed_case():
    # T = 3 views, one image: the mean over the 6 ordered pairs i != j of cos(p_i, z_j), negated
    p = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    z = torch.tensor([[[1.0, 0.0], [1.0, 0.0], [0.0, 2.0]]])
    cos = F.normalize(p, dim=2)[0] @ F.normalize(z, dim=2)[0].T
    expected = -(cos.sum() - cos.diagonal().sum()) / 6
    assert instance_loss(p, z).item() == pytest.approx(expected.item())
    with pytest.raises(ValueError, match='T >= 2'):
        instance_loss(p[:, :1], z[:, :1])


def test_triplet_loss_hand_computed_case():
    anchor = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positive = torch.tensor([[0.6, 0.8], [0.0, 1.0]])
    # anchor 0: d(a0, p0) = |(0.4, -0.8)| = sqrt(0.8), hardest negative p1: sqrt(2); anchor 1: 0 vs d(a1, p0) = sqrt(0.4)
    expected = (max(0.0, math.sqrt(0.8) - math.sqrt(2) + 1.0) + max(0.0, 0.0 - math.sqrt(0.4) + 1.0)) / 2
    assert triplet_loss(anchor, positive, margin=1.0).item() == pytest.approx(expected, rel=1e-5)


def _batch(views=2, batch=4, size=32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, views, 3, size, size, generator=g),
            dict(gt_label=torch.tensor([0, 1, 0, 1]), sample_idx=torch.tensor([3, 0, 5, 2])))


@pytest.mark.parametrize('losses,projector', [(('knn', 'inst'), 'mlp'), (('knn', 'inst'), 'fc'), (('knn',), 'mlp'),
                                              (('ce',), 'mlp'), (('ce', 'triplet'), 'mlp')])
def test_grafit_switches_train(losses, projector):
    model = Grafit(backbone=dict(arch='vit_demo_patch8_64', img_size=32, global_pool='avg'), num_classes=2,
                   memory_size=8, losses=losses, projector=projector, hidden=32,
                   weights=dict(inst=0.5))
    inputs, samples = _batch()
    if 'knn' in losses:
        with torch.no_grad():
            model.loss(inputs, samples)  # an empty memory has no neighbours: the first batch fills it
    out = model.loss(inputs, samples)
    assert set(out) == {f'loss_{name}' for name in losses}
    sum(out.values()).backward()
    assert model.backbone.blocks[0].attn.qkv.weight.grad.abs().sum() > 0
    if 'knn' in losses:
        assert model.memory_labels.tolist() == [1, -1, 1, 0, -1, 0, -1, -1]  # written where the images are
        assert torch.allclose(model.memory[[0, 2, 3, 5]].norm(dim=1), torch.ones(4))


def test_grafit_memory_update_and_errors():
    model = Grafit(backbone=dict(arch='vit_demo_patch8_64', img_size=32, global_pool='avg'), num_classes=2,
                   memory_size=8, losses=('knn',), projector='fc')
    model.eval()  # the same embedding twice
    inputs, samples = _batch(views=1)
    model.loss(inputs, samples)
    first = model.memory[3].clone()
    with torch.no_grad():
        g = F.normalize(model.projector(model.backbone(inputs[:, 0]))[0], dim=0)
    assert torch.allclose(first, g, atol=1e-5)  # a first visit writes g
    model.loss(inputs, samples)
    assert torch.allclose(model.memory[3], F.normalize(0.5 * (first + g), dim=0), atol=1e-5)
    with pytest.raises(IndexError, match='memory_size'):
        model.loss(inputs, dict(samples, sample_idx=torch.tensor([9, 0, 1, 2])))
    with pytest.raises(KeyError, match="sample_idx"):
        model.loss(inputs, dict(gt_label=samples['gt_label']))
    with pytest.raises(ValueError, match='losses'):
        Grafit(backbone=dict(arch='vit_demo_patch8_64'), num_classes=2, memory_size=8, losses=('nca',))


def test_grafit_on_timm_resnet18():
    model = Grafit(backbone=dict(arch='timm:resnet18'), num_classes=20, memory_size=8, hidden=64)
    inputs, samples = _batch(size=32)
    out = model.loss(inputs, samples)
    assert set(out) == {'loss_knn', 'loss_inst'} and model.projector[0].in_features == 512


def test_coarse_trained_backbone_is_scored_at_the_fine_level_beside_a_fine_baseline(tmp_path):
    """The demo's claim at the tiny scale: Grafit trained on CIFAR-100's 20 coarse labels and the cross-entropy
    baseline on the 100 fine labels (one training each, 4 iterations), both scored frozen at the fine labels by
    k-NN and retrieval (tools/test.py), and the board has the two rows in the same columns."""
    import json
    import os.path as osp

    from harness import demo_data
    from harness.demo_data.build import generate
    from tools import leaderboard, test as test_tool, train as train_tool

    data = tmp_path / 'data'
    assert not generate([demo_data.DATASETS['cifar100']], str(data), scale='tiny', log=lambda *a: None)
    root = f'{data}/cifar100'
    configs = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'configs/demo')
    common = [f'train_dataloader.dataset.data_root={root}', 'train_dataloader.dataset.indices=None',
              'train_dataloader.batch_size=100', 'train_cfg.max_epochs=1', 'model.hidden=32',
              'default_hooks.checkpoint.interval=1']
    runs = {'grafit': [], 'fine': ['model.losses=[ce]', 'train_dataloader.dataset.label_level=fine',
                                   'model.num_classes=100', 'experiment.pretrain.recipe=supervised',
                                   'experiment.dataset=cifar100']}
    for name, options in runs.items():
        train_tool.main([f'{configs}/grafit_cifar100_demo.py', '--work-dir', str(tmp_path / name),
                         '--cfg-options'] + common + options)
        test_tool.main([f'{configs}/frozen_cifar100_demo.py', str(tmp_path / name / 'backbone.pth'),
                        '--work-dir', str(tmp_path / f'frozen_{name}'), '--cfg-options',
                        f'test_dataloader.dataset.data_root={root}',
                        f'test_cfg.memory_dataloader.dataset.data_root={root}', 'test_evaluator.linear_probe=None'])
    records = [json.loads((tmp_path / f'frozen_{name}' / 'eval' / 'backbone' / 'result.json').read_text()) for name in runs]
    assert [r['pretrain']['recipe'] for r in records] == ['grafit', 'supervised']  # two rows, not two seeds of one
    assert all(set(r['metrics']) == {'knn_top1', 'retrieval_map'} and r['dataset'] == 'cifar100' for r in records)
    out = tmp_path / 'board.md'
    leaderboard.main([str(tmp_path / 'frozen_grafit'), str(tmp_path / 'frozen_fine'), '--out', str(out)])
    rows = [line for line in out.read_text().splitlines() if line.startswith('| vit_demo_patch8_64')]
    assert len(rows) == 2 and 'CIFAR-100 k-NN top-1' in out.read_text()
