"""MoCo-v3: the InfoNCE loss against a hand computation, its symmetry, the momentum encoder and its schedule, the
two-view data pipeline, equality of a 2-rank run (torchrun, gloo) with one process on the whole batch, and the demo
recipe through tools/train.py into a backbone.pth that a downstream config loads."""
import json
import math
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope
from PIL import Image

import pretrain  # noqa: F401
from _mocov3_case import GLOBAL_BATCH, build_model, global_batch, query_key_case
from backbones import create_model
from downstream.backbone_swap import swap_backbone
from harness import demo_data
from pretrain.mocov3 import MoCoV3, contrastive_loss, cosine_momentum
from pretrain.preprocessor import ClsDataPreprocessor
from vitbench.registry import MODELS, TRANSFORMS

REPO = Path(__file__).resolve().parents[1]
DEMO = 'vit_demo_patch8_64'


def test_infonce_matches_a_hand_computation():
    q = torch.tensor([[1., 0.], [0., 2.], [3., 4.]])
    k = torch.tensor([[1., 1.], [0., -1.], [2., 0.]])
    tau, total = 0.2, 0.
    for i in range(3):  # -log softmax of the positive pair, cosine similarities over tau
        cos = [float(q[i] @ k[j]) / math.hypot(*q[i].tolist()) / math.hypot(*k[j].tolist()) for j in range(3)]
        total += math.log(sum(math.exp(c / tau) for c in cos)) - cos[i] / tau
    assert contrastive_loss(q, k, tau).item() == pytest.approx(total / 3 * 2 * tau, rel=1e-6)  # scaled by 2 tau


def test_loss_pairs_each_view_with_the_others_keys_and_is_symmetric():
    model = build_model()
    x = global_batch()
    loss = model(x, mode='loss')['loss']
    # at the first step the momentum encoder is a copy of backbone + projector: the keys are the base's features
    base = lambda v: model.projector(model.backbone(v))  # noqa: E731
    x1, x2 = x[:, 0], x[:, 1]
    expected = contrastive_loss(model.predictor(base(x1)), base(x2).detach(), 0.2) + \
        contrastive_loss(model.predictor(base(x2)), base(x1).detach(), 0.2)
    torch.testing.assert_close(loss, expected)
    torch.testing.assert_close(model(x.flip(1), mode='loss')['loss'], loss)  # views swapped: the same loss


def test_momentum_schedule_endpoints():
    assert cosine_momentum(0.99, 0, 100) == pytest.approx(0.99)
    assert cosine_momentum(0.99, 50, 100) == pytest.approx(0.995)
    assert cosine_momentum(0.99, 100, 100) == pytest.approx(1.0)
    values = [cosine_momentum(0.99, i, 100) for i in range(101)]
    assert values == sorted(values)


def test_momentum_encoder_gets_no_gradient_and_is_a_moving_average():
    model = build_model()
    x = global_batch()
    model(x, mode='loss')['loss'].backward()
    encoder = model.momentum_encoder.module
    assert all(not p.requires_grad and p.grad is None for p in model.momentum_encoder.parameters())
    assert model.backbone.blocks[0].attn.qkv.weight.grad.abs().sum() > 0
    assert model.projector[0].weight.grad.abs().sum() > 0 and model.predictor[0].weight.grad.abs().sum() > 0
    before = encoder.backbone.blocks[0].attn.qkv.weight.clone(), encoder.projector[3].weight.clone()
    torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1.0).step()  # the base moves
    base = model.backbone.blocks[0].attn.qkv.weight.detach().clone(), model.projector[3].weight.detach().clone()
    assert not torch.equal(base[0], before[0])
    model.momentum = 0.9
    model(x, mode='loss')  # updates the momentum encoder before computing the keys
    for old, new, now in zip(before, base, (encoder.backbone.blocks[0].attn.qkv.weight, encoder.projector[3].weight)):
        torch.testing.assert_close(now, 0.9 * old + 0.1 * new)
    assert not any(k.startswith('momentum_encoder.module.predictor') for k in model.state_dict())


def test_mocov3_initialisation_and_frozen_patch_projection():
    torch.manual_seed(0)
    model = MoCoV3(dict(arch=DEMO, depth=1), dim=16, mlp_dim=32, stop_grad_conv1=True)
    vit = model.backbone
    assert not vit.patch_embed.proj.weight.requires_grad and not vit.pos_embed.requires_grad
    bound = math.sqrt(6 / (3 * 8 * 8 + 192))  # xavier-uniform over the patch projection's fan-in and width
    assert vit.patch_embed.proj.weight.abs().max() <= bound and vit.patch_embed.proj.weight.abs().max() > 0.9 * bound
    assert vit.cls_token.abs().max() < 1e-4
    # MoCo-v3's sin-cos table: the row first (sin then cos), then the column; token 1 + r * 8 + c
    r, c = 2, 5
    torch.testing.assert_close(vit.pos_embed[0, 1 + r * 8 + c, [0, 48, 96, 144]],
                               torch.tensor([math.sin(r), math.cos(r), math.sin(c), math.cos(c)]))
    model(torch.randn(4, 2, 3, 64, 64), mode='loss')['loss'].backward()
    assert vit.patch_embed.proj.weight.grad is None and vit.blocks[0].mlp.fc1.weight.grad is not None


def test_two_view_pipeline_and_preprocessing(tmp_path, vitbench_scope):
    cfg = Config.fromfile(str(REPO / 'configs' / 'demo' / 'mocov3_demo.py'))
    path = tmp_path / 'img.png'
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 80, 3), dtype=np.uint8)).save(path)
    results = dict(img_path=str(path), gt_label=3)
    for step in cfg.train_pipeline:
        results = TRANSFORMS.build(step)(results)
    assert results['inputs'].shape == (2, 3, 48, 48) and results['inputs'].dtype == torch.uint8
    assert not torch.equal(results['inputs'][0], results['inputs'][1])  # two independent views
    solarize = TRANSFORMS.build(dict(type='Solarize', prob=1.0))
    out = solarize(dict(img=Image.new('RGB', (4, 4), (200, 10, 128))))['img']
    assert np.asarray(out)[0, 0].tolist() == [55, 10, 127]  # pixels >= 128 inverted
    with pytest.raises(ValueError, match='GaussianBlur: prob must be in'):
        TRANSFORMS.build(dict(type='GaussianBlur', prob=1.5))
    batch = torch.stack([results['inputs']] * 2)
    data = ClsDataPreprocessor()(dict(inputs=batch, data_samples=None), training=True)
    assert data['inputs'].shape == (2, 2, 3, 48, 48)
    mean = torch.tensor([123.675, 116.28, 103.53])[:, None, None]
    std = torch.tensor([58.395, 57.12, 57.375])[:, None, None]
    torch.testing.assert_close(data['inputs'][1, 1], (batch[1, 1].float() - mean) / std)
    with pytest.raises(ValueError, match='single-view batches'):
        ClsDataPreprocessor(num_classes=10, mixup_alpha=0.8)(dict(inputs=batch, data_samples=None), training=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_ranks_equal_one_process_on_the_whole_batch(tmp_path):
    """torchrun, 2 CPU ranks (gloo), each with half the batch, through mmengine's DDP wrapper: the mean of the
    ranks' losses and the averaged gradients equal one process's loss and gradients on the whole batch, the
    cross-rank BatchNorm statistics included."""
    result = subprocess.run(
        [sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_port', str(_free_port()),
         str(REPO / 'tests' / '_mocov3_dist_worker.py'), str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    ranks = [torch.load(tmp_path / f'rank{r}.pt') for r in range(2)]

    model = build_model()
    model.momentum = 0.9
    loss = model(global_batch(), mode='loss')['loss']
    loss.backward()
    torch.testing.assert_close(ranks[0]['loss'], loss.detach(), rtol=1e-5, atol=1e-6)
    grads = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    assert grads.keys() == ranks[0]['grads'].keys() and len(grads) > 20
    for name, grad in grads.items():  # float32 sums in another order: a tolerance relative to each tensor's scale
        atol = max(1e-3 * float(grad.abs().max()), 1e-6)  # (BN cancels some gradients: 0 up to rounding)
        torch.testing.assert_close(ranks[0]['grads'][name], grad, rtol=1e-3, atol=atol,
                                   msg=lambda m, name=name: f'{name}: {m}')
    torch.testing.assert_close(ranks[0]['running_mean'], model.projector[1].running_mean)

    # the bare loss with gradients for queries and keys: each rank's slice gets the world size x the gradient of
    # the mean loss (the gradients that every rank's loss sends it, summed)
    q, k = (t.requires_grad_() for t in query_key_case())
    bare = contrastive_loss(q, k, 0.2)
    bare.backward()
    torch.testing.assert_close(ranks[0]['bare_loss'], bare.detach())
    half = GLOBAL_BATCH // 2
    for r in range(2):
        torch.testing.assert_close(ranks[r]['q_grad'], 2 * q.grad[r * half:(r + 1) * half])
        torch.testing.assert_close(ranks[r]['k_grad'], 2 * k.grad[r * half:(r + 1) * half])


@pytest.fixture(scope='module')
def data_root(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return str(root / 'imagenet')


def test_demo_trains_exports_and_feeds_a_downstream_config(data_root, tmp_path, checkpoint_policy):
    """configs/demo/mocov3_demo.py through tools/train.py (2 epochs of 5 iterations on the tiny demo data): the
    momentum follows the cosine schedule, backbone.pth and result.json are written, and the transfer demo loads it."""
    work_dir = tmp_path / 'moco'
    options = [f'train_dataloader.dataset.data_root={data_root}', 'train_dataloader.dataset.indices=40',
               'train_dataloader.num_workers=0',
               'train_dataloader.persistent_workers=False', 'train_dataloader.batch_size=8', 'model.mlp_dim=64',
               'train_cfg.max_epochs=2', 'param_scheduler.1.end=2', 'default_hooks.logger.interval=1',
               'default_hooks.checkpoint.interval=2']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/mocov3_demo.py', '--work-dir',
                             str(work_dir), '--cfg-options', *options], cwd=REPO, capture_output=True, text=True,
                            timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]

    logged = [json.loads(line) for line in next(work_dir.glob('*/vis_data/scalars.json')).read_text().splitlines()]
    assert [s['momentum'] for s in logged] == pytest.approx([cosine_momentum(0.99, i, 10) for i in range(10)], abs=1e-6)
    record = json.loads((work_dir / 'result.json').read_text())
    assert record['task'] == 'pretrain' and record['backbone'] == DEMO
    assert record['pretrain'] == dict(recipe='mocov3', epochs=2, checkpoint=None)
    assert record['backbone_overrides'] == dict(img_size=48) and math.isfinite(record['metrics']['loss'])
    exported = torch.load(work_dir / 'backbone.pth')
    assert exported['meta']['pretrain'] == dict(recipe='mocov3', epochs=2)
    state = exported['state_dict']
    assert not any(k.startswith(('momentum', 'projector', 'predictor')) for k in state)  # the encoder only
    trained = torch.load(work_dir / 'epoch_2.pth')['state_dict']
    torch.testing.assert_close(state['blocks.5.attn.qkv.weight'], trained['backbone.blocks.5.attn.qkv.weight'])
    create_model(DEMO, checkpoint=str(work_dir / 'backbone.pth'), **record['backbone_overrides'])

    cfg = Config.fromfile(str(REPO / 'configs' / 'demo' / 'transfer_cifar10_demo.py'))
    swap_backbone(cfg, checkpoint=str(work_dir / 'backbone.pth'))
    init_default_scope('vitbench')
    downstream = MODELS.build(cfg.model)
    downstream.init_weights()
    torch.testing.assert_close(downstream.backbone.blocks[5].attn.qkv.weight, state['blocks.5.attn.qkv.weight'])
