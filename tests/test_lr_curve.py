"""The learning-rate curve tools/train.py computes before training (harness/experiment/lr_curve.py): against the
closed forms of a linear warm-up and a cosine, refused where a warm-up rounds to one step or none (issue 46: the
CIFAR-10 demo at <= 3 iterations an epoch trained its whole run at 1 % of its learning rate), epoch-stepped
schedulers converted where that makes the curve reach its peak, and a two-process torchrun (gloo) of the demo
transfer config that matches the one-process run with the same total batch and records its world size."""
import json
import math
import os
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config

from _input_fault_helpers import exit_status, tool
from _tool_helpers import run_tool
from harness import demo_data
from harness.experiment.lr_curve import ScheduleError, check_schedule, lr_curve

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / 'configs' / 'demo' / 'transfer_cifar10_demo.py'

pytestmark = pytest.mark.usefixtures('vitbench_scope')


def demo_config():
    return Config.fromfile(str(DEMO))


def test_the_demo_curve_is_a_linear_warm_up_then_a_cosine():
    """6 iterations an epoch: warm-up 0.5 epoch = iterations 0-2 from x0.01 to x1, then a cosine to x0.01 over
    iterations 3-23, as the closed forms give them."""
    curve, converted, note = check_schedule(demo_config(), iters_per_epoch=6, world_size=1)
    assert converted is None and note == ''
    lr = 1e-3
    warm_up = [lr * (0.01 + 0.99 * k / 2) for k in range(3)]
    cosine = [0.01 * lr + 0.99 * lr * (1 + math.cos(math.pi * t / 21)) / 2 for t in range(21)]
    np.testing.assert_allclose(curve.lrs, warm_up + cosine, rtol=1e-9)
    assert curve.record() == dict(peak=pytest.approx(lr), peak_iteration=2, end=pytest.approx(cosine[-1]),
                                  iterations=24, iters_per_epoch=6, world_size=1)


@pytest.mark.parametrize('iters_per_epoch, what', [
    (3, r'param_scheduler\.0 \(LinearLR, epochs 0-0\.5\) rounds to a single step, which chained schedulers never '
        r'undo; it would peak at 1e-05 \(x0\.01 of optim_wrapper\.optimizer\.lr\) instead of 0\.001'),
    (1, r'param_scheduler\.0 \(LinearLR, epochs 0-0\.5\) rounds to no iteration at 1 iteration an epoch per process'),
])
def test_a_warm_up_that_rounds_to_one_step_or_none_is_refused(iters_per_epoch, what):
    """Before: 3 iterations an epoch (two processes of 100 images, or a batch of 64) trained at 1e-5 throughout
    and recorded it; 1 iteration an epoch stopped with mmengine's traceback."""
    with pytest.raises(ScheduleError, match=what) as refused:
        check_schedule(demo_config(), iters_per_epoch, world_size=2)
    assert '\n' not in str(refused.value) and '2 processes' in str(refused.value)


def test_epoch_stepped_schedulers_that_miss_their_peak_are_stepped_per_iteration():
    """A LinearLR warm-up of 1 epoch stepped per epoch never warms (mmengine's chained form: one step at x0.1,
    never taken back); stepped per iteration it reaches the peak, so it is converted, and the note says so."""
    cfg = demo_config()
    cfg.param_scheduler = [
        dict(type='LinearLR', start_factor=0.1, by_epoch=True, begin=0, end=1),
        dict(type='CosineAnnealingLR', eta_min_ratio=0.01, by_epoch=True, begin=1, end=4)]
    before = lr_curve(cfg.param_scheduler, 1e-3, 6, 4, None)
    assert before.peak == pytest.approx(1e-4)  # what mmengine would have run
    curve, converted, note = check_schedule(cfg, iters_per_epoch=6, world_size=1)
    assert [s['convert_to_iter_based'] for s in converted] == [True, True]
    assert curve.peak == pytest.approx(1e-3) and curve.lrs[0] == pytest.approx(1e-4)
    assert 'converted to iterations (convert_to_iter_based=True): peak 0.001' in note


def test_epoch_stepped_schedulers_that_reach_their_peak_are_left_alone():
    cfg = demo_config()
    cfg.param_scheduler = [dict(type='LinearLR', start_factor=0.1, by_epoch=True, begin=0, end=2),
                           dict(type='CosineAnnealingLR', by_epoch=True, begin=2, end=4)]
    curve, converted, note = check_schedule(cfg, iters_per_epoch=6, world_size=1)
    assert converted is None and note == '' and curve.lrs[6:12] == [pytest.approx(1e-3)] * 6  # per-epoch steps


# ---------------------------------------------------------------------------------------- torchrun, end to end
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def tiny_cifar(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['cifar10']), str(root), scale='tiny', log=lambda m: None) == []
    return root / 'cifar10'


def _train(work_dir, data_root, batch_size, launcher=None):
    """The demo transfer config on the tiny CIFAR-10 (50 training images), its random augmentations off (crop of
    the whole image, no flip, no Mixup), so that one process and two see the same global batches: tools/train.py
    in this process (no interpreter to start), or under ``launcher``."""
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader')
               for key in (f'dataset.data_root={data_root}', 'num_workers=0', 'persistent_workers=False')]
    options += [f'train_dataloader.batch_size={batch_size}', 'randomness.seed=0',
                'train_dataloader.dataset.pipeline.1.scale=(1.0,1.0)',
                'train_dataloader.dataset.pipeline.1.ratio=(1.0,1.0)',
                'train_dataloader.dataset.pipeline.2.prob=0.0', 'model.data_preprocessor.mixup_alpha=0.0']
    if launcher is None:
        train = tool('train')
        return exit_status(lambda: train.run_main(lambda: train.main(
            [str(DEMO), '--work-dir', str(work_dir), '--cfg-options', *options])))
    return run_tool('tools/train.py', DEMO, '--work-dir', work_dir, '--launcher', 'pytorch', '--cfg-options',
                    *options, launcher=launcher, timeout=300)


@pytest.mark.slow
@pytest.mark.usefixtures('checkpoint_policy')  # the test torch.loads the runs' checkpoints
def test_two_processes_match_one_with_the_same_total_batch(tiny_cifar, tmp_path, monkeypatch):
    """torchrun --nproc_per_node 2 (gloo, CPU), 4 images a process, against one process of 8: 6 iterations an
    epoch both, the same learning-rate curve, the same trained weights up to the order of float sums (stated
    tolerance: 1e-4 absolute after 24 AdamW steps; a curve at 1 % of the learning rate moves them ~100x less)
    and the same top-1 (one test image of 20). result.json records 2 processes and their threads."""
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    assert _train(tmp_path / 'one', tiny_cifar, 8) == 0
    two = _train(tmp_path / 'two', tiny_cifar, 4, launcher=[
        sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node', '2', '--master_port', str(_free_port())])
    assert two.returncode == 0, two.stdout[-2000:] + two.stderr[-3000:]
    records = [json.loads((tmp_path / run / 'result.json').read_text()) for run in ('one', 'two')]

    assert records[0]['lr'] == dict(records[1]['lr'], world_size=1)
    assert records[1]['lr']['iters_per_epoch'] == 6 and records[1]['lr']['peak'] == pytest.approx(1e-3)
    assert records[1]['cost']['device']['world_size'] == 2 and records[1]['cost']['device']['threads'] == 2
    assert records[0]['cost']['device']['world_size'] == 1
    weights = [torch.load(tmp_path / run / 'epoch_4.pth')['state_dict'] for run in ('one', 'two')]
    assert weights[0].keys() == weights[1].keys()
    for name, value in weights[0].items():
        torch.testing.assert_close(weights[1][name], value, rtol=0, atol=1e-4, msg=lambda m, n=name: f'{n}: {m}')
    top1 = [r['metrics']['top1'] for r in records]
    assert abs(top1[1] - top1[0]) <= 100 / 20 + 1e-6, top1
