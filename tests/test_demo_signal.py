"""The demo measures something: its leaderboard stage checks that supervised pre-training beats training from
scratch (configs/pipelines/demo.py, `expect`; `make test-demo` runs the demo and fails where it does not). This
is the other half: the same check fails when the pre-training recipe is broken on purpose, a learning rate of 1e-12
that leaves the weights at their random initialisation (0 itself is refused by tools/train.py)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mmengine.config import Config

from harness.pipeline.spec import load_pipeline
from vitbench.engine.cpu_amp import cpu_has_fast_bf16

REPO = Path(__file__).resolve().parents[1]
FLOWERS = 'Flowers-102 top-1 (full) · transfer_maelite'  # as the board names it: with its protocol


@pytest.mark.slow
def test_a_pretraining_that_learns_nothing_fails_the_demos_expected_ordering(tmp_path):
    expected = next(e for e in load_pipeline(str(REPO / 'configs/pipelines/demo.py')).stage('leaderboard')
                    .spec['expect'] if e['row'] == 'supervised')
    threshold = expected['min_delta'][FLOWERS]  # the demo's own, so the check tested is the one CI applies
    demo = {s.id.split('/')[-1]: s for s in load_pipeline(str(REPO / 'configs/pipelines/demo.py')).stages}
    make_data = demo['data'].spec['argv'][:-3] + ['imagenet', 'imagenet_v2', 'imagenet_real', 'flowers102']
    broken = {'optim_wrapper.optimizer.lr': 1e-12,  # AdamW steps of ~1e-12: the weights never move, 2 epochs do
              'train_cfg.max_epochs': 2, 'train_cfg.val_interval': 2, 'default_hooks.checkpoint.interval': 2,
              'param_scheduler.1.end': 2, 'experiment.pretrain.epochs': 2}
    stages = [
        dict(name='data', kind='command', argv=make_data),
        dict(name='sup', config=demo['sup'].config, depends_on=['data'], outputs=['backbone.pth'],
             cfg_options=broken, args=demo['sup'].spec['args']),
    ]
    flowers = demo['flowers102_scratch']
    stages += [dict(name=f'flowers102_{init}', config=flowers.config, args=flowers.spec['args'],
                    depends_on=['data', 'sup'] if init == 'sup' else ['data'],
                    checkpoint='{sup}/backbone.pth' if init == 'sup' else None) for init in ('sup', 'scratch')]
    stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages],
                       formats=['md'], baseline='scratch',
                       expect=[dict(expected, min_delta={FLOWERS: threshold})]))
    config = tmp_path / 'broken.py'
    config.write_text(f"work_dir = {str(tmp_path / 'work')!r}\nbackbones = ['vit_demo_patch8_64']\njobs = 2\n"
                      f"stages = {stages!r}\n")
    result = subprocess.run([sys.executable, 'tools/pipeline.py', str(config)], cwd=REPO, capture_output=True,
                            text=True, timeout=1800)
    out = result.stdout
    assert result.returncode == 1, out[-4000:] + result.stderr[-2000:]
    assert f'leaderboard: expected ordering FAILED: supervised - scratch >= {threshold:+g} on {FLOWERS}' in out
    assert 'leaderboard: FAILED: 1 of 1 expected orderings do not hold' in out
    assert (tmp_path / 'work' / 'leaderboard.md').exists()  # the table is written all the same
    for init in ('sup', 'scratch'):  # both downstream runs trained: the failure is the ordering, not a crash
        assert f'flowers102_{init}: ok' in out
    # --amp auto: bf16 where this CPU has fast bf16 units, float32 elsewhere, and each result.json says which
    record = json.loads((tmp_path / 'work' / 'vit_demo_patch8_64' / 'sup' / 'result.json').read_text())
    assert record['cost']['precision'] == ('bf16' if cpu_has_fast_bf16() else 'fp32')


def _demo(name):
    return Config.fromfile(str(REPO / 'configs' / 'demo' / f'{name}.py'))


def test_the_demo_schedules_are_the_ones_its_thresholds_were_measured_with():
    """configs/pipelines/demo.py's expected orderings rest on the Δ measured over seeds 0-4 with exactly these
    schedules (docs/demo.md "What make demo gives", docs/demo-signal.md): a change to one of them must come with a
    re-measured threshold."""
    sup = _demo('sup_demo')
    assert sup.model.backbone.img_size == 32 and sup.model.backbone.global_pool == 'avg'  # pooled: a dense start
    assert sup.train_cfg.max_epochs == 25 and sup.optim_wrapper.optimizer.lr == 1e-3
    assert sup.optim_wrapper.optimizer.type == 'AdamW' and sup.model.loss.label_smoothing == 0.1
    assert sup.model.data_preprocessor.mixup_alpha == 0 and sup.model.data_preprocessor.cutmix_alpha == 0
    assert [t['type'] for t in sup.train_pipeline] == ['LoadImage', 'RandomResizedCrop', 'RandomHorizontalFlip',
                                                       'PackInputs']  # no colour jitter, no 3-Augment
    mae = _demo('mae_demo')
    assert mae.train_cfg.max_epochs == 8 and mae.optim_wrapper.optimizer.lr == 5e-4 and mae.img_size == 64
    cifar = _demo('transfer_cifar10_demo')
    assert cifar.train_dataloader.dataset.indices == 200 and cifar.train_cfg.max_epochs == 4
    flowers = _demo('transfer_flowers102_demo')
    assert flowers.train_cfg.max_epochs == 3 and flowers.img_size == 32
    upernet = _demo('upernet_demo')
    assert upernet.train_cfg.max_iters == 40 and upernet.crop_size == (128, 128)
    maskrcnn = _demo('maskrcnn_demo')
    assert maskrcnn.train_cfg.max_iters == 140 and maskrcnn.image_size == (128, 128)
