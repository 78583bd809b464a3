"""The result.json files the leaderboard tests (tests/test_leaderboard.py, tests/test_leaderboard_seeds.py) tabulate,
written by hand, and tools/leaderboard.py run as a user runs it."""
import json
import subprocess
import sys
from pathlib import Path

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

