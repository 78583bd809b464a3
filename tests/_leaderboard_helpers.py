"""The result.json files the leaderboard tests (tests/test_leaderboard.py, tests/test_leaderboard_seeds.py) tabulate,
written by hand, and tools/leaderboard.py run as a user runs it."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from vitbench.results.table import Column

REPO = Path(__file__).resolve().parents[1]
BACKBONE = 'vit_demo_patch8_64'


def record(task, dataset, metrics, recipe='mae', epochs=6, eval='ss', created='2026-01-01T00:00:00+00:00',
           overrides=None, gflops=0.22, **pretrain_extra):
    return dict(task=task, dataset=dataset, backbone=BACKBONE, backbone_overrides=overrides or {},
                pretrain=dict(recipe=recipe, epochs=epochs, checkpoint=None, **pretrain_extra), metrics=metrics,
                eval=eval, params_M=2.72, gflops=gflops, config=f'configs/demo/{task}.py', git_commit='abc',
                created=created)


def write(root: Path, name: str, rec) -> Path:
    path = root / name / 'result.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rec if isinstance(rec, str) else json.dumps(rec))
    return path


@pytest.fixture
def runs(tmp_path):
    return make_runs(tmp_path / 'runs')


def make_runs(root: Path) -> Path:
    """Three pre-trainings plus scratch; MAE has no COCO run (a missing metric); a conflicting duplicate."""
    write(root, 'sup/pretrain', record('pretrain', 'imagenet', dict(top1=64.8, top5=98.6, loss=0.4),
                                       recipe='supervised', overrides=dict(img_size=48), gflops=0.12))
    write(root, 'mae/pretrain', record('pretrain', 'imagenet', dict(reconstruction_mse=0.53, loss=0.5)))
    write(root, 'dmae/pretrain', record('pretrain', 'imagenet', dict(loss=0.54), recipe='dmae'))
    for recipe, epochs, miou, box, cifar, flowers in (('supervised', 6, 30.5, 12.0, 91.0, 20.5),
                                                      ('mae', 6, 28.25, None, 88.0, 15.0),
                                                      ('dmae', 6, 33.0, 14.5, 90.0, 22.0),
                                                      ('scratch', 0, 25.0, 8.0, 85.0, 16.1)):
        write(root, f'{recipe}/upernet', record('seg', 'ade20k-demo', dict(mIoU=miou, mAcc=40.0, aAcc=80.0),
                                                 recipe=recipe, epochs=epochs))
        if box is not None:
            write(root, f'{recipe}/maskrcnn', record('det', 'coco-demo', dict(bbox_mAP=box, segm_mAP=box - 1),
                                                      recipe=recipe, epochs=epochs))
        write(root, f'{recipe}/cifar10', record('transfer', 'cifar10', dict(top1=cifar, top5=99.0), recipe=recipe,
                                                 epochs=epochs, overrides=dict(img_size=32), gflops=0.06))
        write(root, f'{recipe}/flowers', record('transfer', 'flowers102', dict(top1=flowers), recipe=recipe,
                                                 epochs=epochs))
    # the same MAE segmentation run again, later, with another result: a conflict
    write(root, 'mae/upernet_again', record('seg', 'ade20k-demo', dict(mIoU=29.75),
                                            created='2026-02-01T00:00:00+00:00'))
    # an identical duplicate is no conflict
    write(root, 'dmae/flowers_copy', record('transfer', 'flowers102', dict(top1=22.0), recipe='dmae'))
    # a multi-scale evaluation gets its own column
    write(root, 'dmae/upernet_ms', record('seg', 'ade20k-demo', dict(mIoU=34.0), recipe='dmae', eval='ms'))
    return root


SEG_SS, SEG_MS = Column('seg', 'ade20k-demo', 'ss'), Column('seg', 'ade20k-demo', 'ms')
BOX, CIFAR, FLOWERS = Column('box', 'coco-demo'), Column('transfer', 'cifar10'), Column('transfer', 'flowers102')


def rows_by_recipe(table):
    return {r.recipe: r for r in table.rows}



def run_tool(*args):
    return subprocess.run([sys.executable, 'tools/leaderboard.py', *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)



# the columns of a demo-scale board: ImageNet and its robustness and calibration test sets, segmentation (SS, MS),
# detection, two transfer datasets; rows of two backbones, four recipes
WIDE_BACKBONES = (('vit_demo_patch8_64', 2.72, 0.22), ('deit3_small_patch16_224', 22.1, 4.6))
WIDE_RECIPES = (('supervised', 6), ('mae', 6), ('dmae', 6), ('scratch', 0))
IMAGENET_METRICS = dict(top1=60.0, top1_v2=48.0, top1_real=66.0, top1_a=4.0, top1_r=20.0, top1_sketch=12.0,
                        mCE=78.0, ece=5.5)


def _accuracy_evidence(work_dir: Path, metric: str, value: float, n: int, seed: int) -> None:
    """per_image.npz with ``round(value% of n)`` images correct: the cell gets its interval over the images."""
    from vitbench.results import per_image
    rng = np.random.default_rng(seed)
    correct = np.zeros(n, bool)
    correct[rng.choice(n, int(round(value / 100 * n)), replace=False)] = True
    per_image.write(str(work_dir), {metric: dict(kind='accuracy', ids=np.array([f'img{i}' for i in range(n)]),
                                                 correct=correct)})


def make_wide_runs(root: Path, images: int = 400) -> Path:
    """A board as wide as the demo's (15 measured columns, 8 of them ImageNet's own test sets): transfer cells of
    one run with per-image evidence (an interval over the images), segmentation and detection over two seeds
    (mean ± std), ImageNet with its robustness test sets on one backbone only (mostly empty columns, as on the
    demo board), device-hours on every run."""
    def cost(hours):
        return dict(wall_s=hours * 3600, device=dict(kind='cpu', name='test', count=1, threads=1),
                    device_hours=hours)
    for b, (backbone, params, gflops) in enumerate(WIDE_BACKBONES):
        for r, (recipe, epochs) in enumerate(WIDE_RECIPES):
            shift = 3.0 * b + (0, -1.5, 2.0, -6.0)[r]  # rows that differ, scratch the weakest

            def rec(task, dataset, metrics, seed=0, hours=0.01, eval='ss'):
                out = record(task, dataset, metrics, recipe=recipe, epochs=epochs, eval=eval, gflops=gflops)
                out.update(backbone=backbone, params_M=params, seed=seed, cost=cost(hours * (1 + b)))
                return out
            name = f'{backbone}/{recipe}'
            if b == 0 and recipe != 'scratch':
                write(root, f'{name}/pretrain', rec('pretrain', 'imagenet', {
                    k: v + (-shift if k in ('mCE', 'ece') else shift) for k, v in IMAGENET_METRICS.items()},
                    hours=0.2))
            for seed in (0, 1):
                write(root, f'{name}/upernet/seed{seed}', rec('seg', 'ade20k-demo', dict(mIoU=30 + shift + seed * (1 + 0.4 * r)),
                                                             seed=seed, hours=0.05))
                write(root, f'{name}/upernet_ms/seed{seed}', rec('seg', 'ade20k-demo', dict(mIoU=31 + shift + seed * (0.8 + 0.5 * r)),
                                                                seed=seed, hours=0.05, eval='ms'))
                write(root, f'{name}/maskrcnn/seed{seed}', rec('det', 'coco-demo', dict(
                    bbox_mAP=12 + shift + seed * (0.5 + 0.3 * r), segm_mAP=11 + shift + seed * (0.4 + 0.2 * r)), seed=seed, hours=0.08))
            for dataset, base in (('cifar10', 88.0), ('flowers102', 20.0)):
                value = round((base + shift) / 100 * images) / images * 100
                path = write(root, f'{name}/{dataset}', dict(rec('transfer', dataset, dict(top1=value)),
                                                                per_image=['top1']))
                _accuracy_evidence(path.parent, 'top1', value, images, seed=b * 10 + r)
    return root
