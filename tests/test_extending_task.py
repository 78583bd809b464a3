"""docs/extending-task.md followed with a toy task (tests/toy_fixtures/toy_task.py): its record, registered as a
built-in task's is, is all that result_record, the leaderboard table, the Markdown and CSV boards, the plots, the
cross-task rank and the pipeline's stage summary need; and no module of the suite keeps a table of task names
beside the records, so that the guide's count stays true."""
import ast
import csv
import io
import json
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from mmengine.config import Config

from harness.experiment.result_record import eval_of, experiment_of, normalize_metrics
from harness.pipeline.record import key_metric
from vitbench.results import schema
from vitbench.results.plots import measured_plots
from vitbench.results.rank import column_key, cross_task_rank
from vitbench.results.render import render_csv, render_markdown
from vitbench.results.schema import Kind, Metric
from vitbench.results.table import Column, LeaderboardError, build_table, read_result

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / 'tests' / 'toy_fixtures'))
from toy_task import TOY_DEPTH  # noqa: E402

DELTA1, ABS_REL = Column('toy_delta1', 'toyroom-demo'), Column('toy_abs_rel', 'toyroom-demo')


@pytest.fixture
def toy_task():
    """The toy record in the registry for one test (a built-in task's record stays there)."""
    schema.register(TOY_DEPTH)
    yield TOY_DEPTH
    del schema.TASKS[TOY_DEPTH.name]


def toy_config() -> Config:
    experiment = dict(task='toy_depth', dataset='toyroom', backbone='vit_demo_patch8_64')
    return Config(dict(experiment=experiment), cfg_text='(in memory)', filename='configs/toy_depth.py')


def result(task, dataset, metrics, recipe, seed=0):
    return dict(task=task, dataset=dataset, backbone='vit_demo_patch8_64', backbone_overrides={},
                pretrain=dict(recipe=recipe, epochs=6, checkpoint=None), metrics=metrics, eval='ss', params_M=2.72,
                gflops=0.22, seed=seed, config=f'configs/demo/{task}.py', created='2026-01-01T00:00:00+00:00')


def write(root: Path, name: str, record: dict) -> Path:
    path = root / name / 'result.json'
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    return path


@pytest.fixture
def toy_runs(tmp_path):
    """Two pre-trainings measured on the toy task (δ1 and AbsRel: MAE better on both) and on segmentation."""
    for recipe, delta1, abs_rel, miou in (('supervised', 61.5, 0.31, 30.0), ('mae', 70.25, 0.24, 32.0)):
        write(tmp_path, f'{recipe}/depth', result('toy_depth', 'toyroom-demo', dict(delta1=delta1, abs_rel=abs_rel),
                                                  recipe))
        write(tmp_path, f'{recipe}/seg', result('seg', 'ade20k-demo', dict(mIoU=miou), recipe))
    return tmp_path


def test_result_record_reads_the_toy_task_s_fractions_and_accepts_its_name(toy_task):
    reported = {'toydepth/delta1': 0.853, 'abs_rel': 0.12}  # as the toy's toolbox reports them
    assert normalize_metrics(reported) == pytest.approx(dict(delta1=85.3, abs_rel=0.12))
    cfg = toy_config()
    assert experiment_of(cfg)['task'] == 'toy_depth' and eval_of(cfg, experiment_of(cfg)) == 'ss'


def test_without_its_record_the_toy_task_is_refused_with_the_known_names(tmp_path):
    assert normalize_metrics({'toydepth/delta1': 0.853}) == dict(delta1=0.853)  # no record: not a fraction
    cfg = toy_config()
    with pytest.raises(ValueError, match=r"experiment.task='toy_depth', expected one of \('pretrain', "):
        experiment_of(cfg)
    path = write(tmp_path, 'run', result('toy_depth', 'toyroom-demo', dict(delta1=61.5), 'mae'))
    with pytest.raises(LeaderboardError, match="key 'task' is 'toy_depth', expected one of"):
        read_result(str(path))


def test_the_leaderboard_table_fills_the_toy_columns_after_the_built_in_ones(toy_task, toy_runs):
    table = build_table([str(toy_runs)])
    assert [c.label for c in table.columns] == ['ADE20k-demo mIoU SS', 'ToyRoom-demo δ1', 'ToyRoom-demo AbsRel']
    rows = {r.recipe: r for r in table.rows}
    assert rows['mae'].cells[DELTA1].value == 70.25 and rows['supervised'].cells[ABS_REL].value == 0.31
    assert table.best(DELTA1) == 70.25 and table.best(ABS_REL) == 0.24  # AbsRel: lower is better


def test_a_toy_percentage_out_of_range_is_refused_but_its_error_is_no_percentage(toy_task, tmp_path):
    bad = write(tmp_path, 'bad', result('toy_depth', 'toyroom-demo', dict(delta1=101.0), 'mae'))
    with pytest.raises(LeaderboardError, match=r"key 'metrics.delta1' is 101.0, expected a percentage"):
        read_result(str(bad))
    fine = write(tmp_path, 'fine', result('toy_depth', 'toyroom-demo', dict(delta1=10.0, abs_rel=150.0), 'mae'))
    assert read_result(str(fine))['metrics']['abs_rel'] == 150.0


def test_the_markdown_and_csv_boards_show_and_mark_the_toy_columns(toy_task, toy_runs):
    table = build_table([str(toy_runs)])
    md = render_markdown(table, [])
    assert '| backbone | pretraining | epochs | params (M) | GFLOPs | ADE20k-demo mIoU SS | ToyRoom-demo δ1 | ' \
           'ToyRoom-demo AbsRel | runs |' in md
    mae_line = next(line for line in md.splitlines() if line.startswith('| vit_demo_patch8_64 | mae |'))
    assert '**70.2**' in mae_line and '**0.2**' in mae_line  # the best of each, AbsRel's the smaller
    rows = {r['pretraining']: r for r in csv.DictReader(io.StringIO(render_csv(table, [])))}
    assert rows['supervised']['ToyRoom-demo AbsRel'] == '0.31' and rows['mae']['ToyRoom-demo δ1'] == '70.25'
    assert rows['mae']['best'] == 'ADE20k-demo mIoU SS; ToyRoom-demo δ1; ToyRoom-demo AbsRel'


def test_the_plots_and_the_cross_task_rank_take_the_toy_task(toy_task, toy_runs):
    table = build_table([str(toy_runs)])
    assert 'Toy depth δ1 per dataset' in [title for title, _ in measured_plots(table)]
    ranking = cross_task_rank(table)
    assert [column_key(c) for c in ranking.columns] == ['ade20k-demo', 'toyroom-demo', 'toyroom-demo_absrel']
    assert ranking.ranked[0].row.recipe == 'mae'  # better on all three, the error counted the right way round


def test_the_pipeline_summarises_a_toy_stage_by_its_headline_metrics(toy_task, tmp_path):
    write(tmp_path, 'stage', result('toy_depth', 'toyroom-demo', dict(delta1=61.5, abs_rel=0.31, loss=0.2), 'mae'))
    stage = SimpleNamespace(work_dir=str(tmp_path / 'stage'), spec={})
    assert key_metric(stage) == 'delta1 61.50, abs_rel 0.31'  # both: its record shows two


@pytest.fixture
def refused_toy():
    """The toy record to be refused: removed again should a test's ``register`` take it after all."""
    yield TOY_DEPTH
    schema.TASKS.pop(TOY_DEPTH.name, None)


def test_a_kind_named_as_a_built_in_one_but_different_is_refused(refused_toy):
    clash = replace(refused_toy, metrics=(Metric('delta1', Kind('cls', 'δ1')),))
    with pytest.raises(ValueError, match=r"kind 'cls' of task 'toy_depth' differs from task 'pretrain''s"):
        schema.register(clash)
    assert 'toy_depth' not in schema.TASKS and schema.kinds()['cls'].label == 'top-1'
    same = replace(refused_toy, metrics=(*refused_toy.metrics, Metric('top1', schema.kinds()['cls'])))
    assert schema.register(same) is same  # the built-in Kind itself: shared, as fine-tuning shares pre-training's


def test_a_kind_beside_no_known_kind_is_refused(refused_toy):
    beside = replace(refused_toy, metrics=(Metric('delta1', Kind('toy_delta1', 'δ1', beside='toy_delta2')),))
    with pytest.raises(ValueError, match=r"kind 'toy_delta1' of task 'toy_depth' has beside='toy_delta2', expected"):
        schema.register(beside)
    assert 'toy_depth' not in schema.TASKS


def test_registers_without_a_package_is_refused(refused_toy):
    with pytest.raises(ValueError, match=r"task 'toy_depth' has registers but no package"):
        schema.register(replace(refused_toy, registers=(('dataset', ('datasets',)),)))
    assert 'toy_depth' not in schema.TASKS


# ---------------------------------------------------------------------------------------------- the count

SUITE = ('backbones', 'pretrain', 'downstream', 'vitbench', 'tools')
# the one table a task may join: the backbone swap's adapters, for a dense head (docs/extending-task.md, step 3)
ADAPTER_TABLE = 'downstream/backbone_swap.py'
# comparisons of a run's task with a built-in name that no new task changes: a pre-training's own checkpoint
# metadata, and the dense benchmark's --dense-tasks option
KNOWN_COMPARISONS = {('pretrain/export.py', 'pretrain'), ('downstream/analysis/keep_blocks.py', 'pretrain'),
                     ('tools/test.py', 'pretrain'), ('downstream/benchmark.py', 'det')}


def _suite_modules():
    for package in SUITE:
        for path in sorted((REPO / package).rglob('*.py')):
            name = path.relative_to(REPO).as_posix()
            if name != 'vitbench/results/schema.py':
                yield name, path.read_text()


def test_no_module_outside_the_records_lists_tasks_or_column_kinds():
    """A literal tuple, list, set or dict that names two built-in tasks or column kinds is a table a new task would
    have to join: the records are the only one."""
    names = set(schema.TASKS) | set(schema.kinds())
    tables = []
    for name, text in _suite_modules():
        for node in ast.walk(ast.parse(text)):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, 'elts', None) \
                if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else None
            strings = {i.value for i in items or () if isinstance(i, ast.Constant) and isinstance(i.value, str)}
            if len(strings & names) >= 2 and name != ADAPTER_TABLE:
                tables.append(f'{name}:{node.lineno}: {sorted(strings & names)}')
    assert not tables, 'task or kind names listed outside vitbench/results/schema.py:\n' + '\n'.join(tables)


def test_no_module_outside_the_records_compares_a_task_with_a_name():
    """``task == 'det'``: a property of the task that belongs in its record (``roi_ops``, ``finetunes``, ...)."""
    found = set()
    for name, text in _suite_modules():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare) and 'task' in (ast.get_source_segment(text, node) or ''):
                for operand in (node.left, *node.comparators):
                    if isinstance(operand, ast.Constant) and operand.value in schema.TASKS:
                        found.add((name, operand.value))
    assert found - KNOWN_COMPARISONS == set(), 'a task compared with a name; put the property in its record'
    assert KNOWN_COMPARISONS <= found  # (none of them went stale)


def test_the_guide_names_the_files_a_task_adds_and_each_exists():
    guide = (REPO / 'docs' / 'extending-task.md').read_text()
    for path in ('vitbench/results/schema.py', 'downstream/backbone_swap.py', 'tests/toy_fixtures/toy_task.py',
                 'tests/test_extending_task.py'):
        assert f'`{path}`' in guide and (REPO / path).is_file()
    demo = {(text.split("dataset='")[1].split("'")[0]) for path in (REPO / 'configs' / 'demo').glob('*.py')
            for text in [path.read_text()] if "experiment = dict(task=" in text and "dataset='" in text}
    assert demo <= {d for task in schema.TASKS.values() for d in task.demo_datasets}  # the records' demo datasets
