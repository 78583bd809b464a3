"""A distillation teacher that another run produces (thesis Table 3.7's DeiT-B⚗ trained on CIFAR-10 from scratch,
distilling from a RegNetY-16GF trained on CIFAR-10 itself): the map's ``teacher`` key makes ``tools/pipeline.py
--table`` train the teacher first and pass its exported model as the student's ``--teacher``; the teacher's
transfer run exports its classifier (head included), and that file is a teacher the student builds and trains
with."""
import importlib.util
from pathlib import Path

import pytest
import torch
from mmengine.config import Config

import downstream  # noqa: F401  (registers the datasets, transforms and hooks)
import pretrain  # noqa: F401
from downstream.backbone_swap import swap_backbone
from harness import demo_data
from harness.experiment.cli import build_runner
from harness.pipeline.paper_table import find_table, table_stages
from pretrain.teacher import build_teacher
from vitbench.results.paper_map import row_runs

REPO = Path(__file__).resolve().parents[1]
TEACHER = 'configs/transfer/cifar10_regnety160_scratch.py'
STUDENT = 'configs/transfer/cifar10_deit_base_distilled_scratch.py'

pytestmark = [pytest.mark.usefixtures('checkpoint_policy'), pytest.mark.usefixtures('vitbench_scope')]


def test_table_3_7_trains_the_teacher_then_the_student_with_its_export():
    table = find_table('thesis:3.7')
    row = next(r for r in table.rows if r['model'] == 'DeiT-B⚗ (CIFAR-10 from scratch)')
    assert [(r.config, r.teacher) for r in row_runs(row)] == [(STUDENT, TEACHER)]
    stages = {s['name']: s for s, _ in table_stages(table)}
    teacher, student = stages['cifar10_regnety160_scratch'], stages['cifar10_deit_base_distilled_scratch']
    assert teacher['config'] == TEACHER and teacher['outputs'] == ['backbone.pth'] and not teacher.get('depends_on')
    assert student['depends_on'] == ['cifar10_regnety160_scratch']
    assert student['args'] == ['--teacher', '{cifar10_regnety160_scratch}/backbone.pth']
    assert 'checkpoint' not in student  # from scratch: the teacher is not its starting weights


def test_the_teacher_config_exports_and_the_student_config_distils_from_that_file():
    teacher, student = (Config.fromfile(str(REPO / c)) for c in (TEACHER, STUDENT))
    assert {h['type'] for h in teacher.custom_hooks} == {'TransferCheckHook', 'BackboneExportHook'}
    assert teacher.model.backbone.arch == 'timm:regnety_160' and teacher.model.backbone.init_cfg is None
    assert student.model.backbone.init_cfg is None and student.model.distillation.kind == 'hard'
    assert student.model.distillation.teacher.checkpoint == 'work_dirs/cifar10_regnety160_scratch/backbone.pth'
    for cfg in (teacher, student):
        assert (cfg.optim_wrapper.optimizer.lr, cfg.train_cfg.max_epochs, cfg.model.num_classes) == (1e-3, 7200, 10)


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['cifar10']), str(root), scale='tiny', log=lambda m: None) == []
    return root / 'cifar10'


def demo_run(tiny, work_dir, backbone, **keys):
    """The demo CIFAR-10 transfer (configs/demo/transfer_cifar10_demo.py) from scratch with ``backbone``: one epoch
    of 16 images in batches of 8."""
    cfg = Config.fromfile(str(REPO / 'configs/demo/transfer_cifar10_demo.py'))
    cfg.merge_from_dict(keys)
    swap_backbone(cfg, backbone)
    for loader in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        cfg[loader].update(num_workers=0, persistent_workers=False, batch_size=8)
        cfg[loader].dataset.update(data_root=str(tiny), indices=16)
    cfg.train_cfg.max_epochs = cfg.train_cfg.val_interval = 1
    cfg.work_dir = str(work_dir)
    runner = build_runner(cfg)
    runner.train()
    return runner


def test_a_transfer_runs_export_is_the_distillation_teacher_of_the_next_run(tiny, tmp_path):
    """Demo scale: a tiny timm convnet trained from scratch with the teacher config's hooks exports backbone.pth;
    tools/train.py --teacher points the student config's teacher at it; the student (a distilled DeiT) builds the
    teacher from the file, with its 10-class head (the logits of the trained model), and trains against it."""
    hooks = Config.fromfile(str(REPO / TEACHER)).custom_hooks
    teacher_run = demo_run(tiny, tmp_path / 'teacher', 'timm:test_convnext', custom_hooks=hooks)
    exported = tmp_path / 'teacher' / 'backbone.pth'
    assert exported.is_file()
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        expected = teacher_run.model.backbone.eval()(x)
        torch.testing.assert_close(build_teacher(dict(checkpoint=str(exported)), num_classes=10)(x), expected)

    spec = importlib.util.spec_from_file_location('vitbench_tool_train', REPO / 'tools' / 'train.py')
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    student_cfg = Config.fromfile(str(REPO / STUDENT))
    train.use_teacher(student_cfg, str(exported))  # what --teacher does
    distillation = student_cfg.model.distillation.to_dict()
    student = demo_run(tiny, tmp_path / 'student', 'deit_tiny_distilled_patch16_224',
                       **{'model.distillation': distillation, 'model.distill_inference': 'logit_mean',
                          'model.backbone.img_size': 32, 'model.backbone.global_pool': 'token',  # the demo's: avg
                          'experiment.backbone_overrides.global_pool': 'token'})
    model = student.model
    assert model.distillation['kind'] == 'hard' and model.recipe == 'supervised_distilled'
    with torch.no_grad():
        torch.testing.assert_close(model.teacher(x), expected)
    logged = student.message_hub.log_scalars
    assert 'train/loss_dist' in logged and torch.isfinite(torch.tensor(logged['train/loss_dist'].current()))
