"""docs/extending-task.md followed: a task is its package (its record included) and its configs. The guide's own code
blocks, written out as it says, train through tools/train.py and show on tools/leaderboard.py's board; a toy task
from outside the suite (tests/toy_fixtures/toy_depth/) runs through a pipeline with ``imports``; its record alone is
all that result_record, the leaderboard table, the boards, the plots, the cross-task rank and the pipeline's stage
summary need; the suite's own records load without their packages, in an order no import changes; and no module of
the suite keeps a table of task names beside the records, so that the guide's count stays true."""
import ast
import csv
import io
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from mmengine.config import Config

from harness.experiment.cli import ConfigError, add_imports
from harness.experiment.result_record import eval_of, experiment_of, normalize_metrics
from harness.pipeline.record import key_metric
from vitbench.results import schema
from vitbench.results.plots import measured_plots
from vitbench.results.rank import column_key, cross_task_rank
from vitbench.results.render import render_csv, render_markdown
from vitbench.results.schema import Kind, Metric
from vitbench.results.table import Column, LeaderboardError, build_table, read_result

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / 'tests' / 'toy_fixtures'
TOY = FIXTURES / 'toy_depth'
GUIDE = REPO / 'docs' / 'extending-task.md'
SUITE_ORDER = ('pretrain', 'finetune', 'seg', 'det', 'transfer', 'frozen')
DELTA1, ABS_REL = Column('toy_delta1', 'toyroom-demo'), Column('toy_abs_rel', 'toyroom-demo')


def load_toy_record():
    """Run the toy's record module, which registers it as importing its package would; returns its Task."""
    return runpy.run_path(str(TOY / 'record.py'))['TOY_DEPTH']


@pytest.fixture
def toy_task():
    """The toy record in the registry for one test (the suite's records stay there)."""
    record = load_toy_record()
    yield record
    del schema.TASKS[record.name]


@pytest.fixture
def refused_toy():
    """The toy record, not registered: removed again should a test's ``register`` take it after all."""
    record = load_toy_record()
    del schema.TASKS[record.name]
    yield record
    schema.TASKS.pop(record.name, None)


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


def run(argv, cwd=REPO, pythonpath=FIXTURES, timeout=600):
    """A command as a user runs it, with ``pythonpath`` (the toy task's folder) importable."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(pythonpath), os.environ.get('PYTHONPATH', '')]))
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def toy_runs(tmp_path):
    """Two pre-trainings measured on the toy task (δ1 and AbsRel: MAE better on both) and on segmentation."""
    for recipe, delta1, abs_rel, miou in (('supervised', 61.5, 0.31, 30.0), ('mae', 70.25, 0.24, 32.0)):
        write(tmp_path, f'{recipe}/depth', result('toy_depth', 'toyroom-demo', dict(delta1=delta1, abs_rel=abs_rel),
                                                  recipe))
        write(tmp_path, f'{recipe}/seg', result('seg', 'ade20k-demo', dict(mIoU=miou), recipe))
    return tmp_path


# ---------------------------------------------------------------------------------------------- the records

def test_the_suite_s_records_load_without_their_packages_as_importing_them_registers_them():
    """The bottom layer registers no task; harness.tasks reads the suite's records from their files without torch or
    the task packages; importing the packages afterwards registers the very same records (no refusal), in the same
    order."""
    code = ('import sys\n'
            'from vitbench.results import schema, table\n'
            'bare = schema.task_names()\n'
            'from harness.tasks import load_tasks\n'
            'load_tasks()\n'
            'print(bare, schema.task_names(), [m for m in ("torch", "pretrain", "downstream") if m in sys.modules])\n'
            'import downstream, pretrain\n'
            'print(schema.task_names(), len(schema.kinds()))\n')
    out = run([sys.executable, '-c', code])
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [f'() {SUITE_ORDER} []', f'{SUITE_ORDER} 10']


def test_the_leaderboard_order_is_the_records_whatever_registers_first(refused_toy):
    suite = dict(schema.TASKS)
    try:
        schema.TASKS.clear()
        for record in (refused_toy, *reversed(suite.values())):
            schema.register(record)
        assert schema.task_names() == (*SUITE_ORDER, 'toy_depth')  # outside tasks after the suite's
        assert list(schema.kinds()) == ['cls', 'mce', 'ece', 'seg', 'box', 'mask', 'transfer', 'knn', 'retrieval',
                                        'linear_probe', 'toy_delta1', 'toy_abs_rel']
        del schema.TASKS['toy_depth']
        schema.register(replace(refused_toy, order=250))  # a task may take a place between the suite's
        assert schema.task_names() == ('pretrain', 'finetune', 'toy_depth', 'seg', 'det', 'transfer', 'frozen')
        with pytest.raises(ValueError, match=r"task 'toy_first' has order='first', expected a whole number"):
            schema.register(replace(refused_toy, name='toy_first', order='first'))
    finally:
        schema.TASKS.clear()
        schema.TASKS.update(suite)


def test_result_record_reads_the_toy_task_s_fractions_and_accepts_its_name(toy_task):
    reported = {'toydepth/delta1': 0.853, 'abs_rel': 0.12}  # as the toy's metric reports them
    assert normalize_metrics(reported) == pytest.approx(dict(delta1=85.3, abs_rel=0.12))
    cfg = toy_config()
    assert experiment_of(cfg)['task'] == 'toy_depth' and eval_of(cfg, experiment_of(cfg)) == 'ss'


def test_without_its_record_the_toy_task_is_refused_with_the_known_names(tmp_path):
    assert normalize_metrics({'toydepth/delta1': 0.853}) == dict(delta1=0.853)  # no record: not a fraction
    cfg = toy_config()
    with pytest.raises(ValueError, match=r"experiment.task='toy_depth', expected one of \('pretrain', "):
        experiment_of(cfg)
    path = write(tmp_path, 'run', result('toy_depth', 'toyroom-demo', dict(delta1=61.5), 'mae'))
    with pytest.raises(LeaderboardError, match="key 'task' is 'toy_depth', expected one of .*--imports MODULE"):
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
    stage = SimpleNamespace(work_dir=str(tmp_path / 'stage'), spec={}, kind='train')
    assert key_metric(None, stage) == 'delta1 61.50, abs_rel 0.31'  # both: its record shows two


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


# ---------------------------------------------------------------------------------------------- the imports

def test_imports_name_the_module_that_cannot_be_imported(tmp_path):
    out = run([sys.executable, 'tools/leaderboard.py', tmp_path, '--imports', 'no_such_task_module'])
    assert out.returncode == 2 and out.stderr.strip().splitlines() == [
        "error: --imports no_such_task_module: ModuleNotFoundError: No module named 'no_such_task_module' (expected "
        'a module on PYTHONPATH, e.g. the package of a task of your own)']
    cfg = toy_config()
    add_imports(cfg, ['json', 'json'])  # a training's --imports: imported, and named by the config it saves
    assert cfg.custom_imports == dict(imports=['json'], allow_failed_imports=False)
    with pytest.raises(ConfigError, match=r"^--imports no_such_task_module: ModuleNotFoundError: No module named"):
        add_imports(cfg, ['no_such_task_module'])


@pytest.mark.slow
def test_a_toy_task_from_outside_runs_through_a_pipeline_with_imports_and_the_leaderboard(tmp_path):
    """The toy's config imports its package (custom_imports); the pipeline's ``imports`` let its leaderboard stage
    and its summary read the record, and go to its train stage as --imports (tools/leaderboard.py --imports: the
    guide's test below)."""
    pipeline = tmp_path / 'pipeline.py'
    pipeline.write_text(f"work_dir = {str(tmp_path / 'runs')!r}\nbackbones = ['vit_demo_patch8_64']\n"
                        "imports = ['toy_depth']\n"
                        f"stages = [dict(name='depth', config={str(FIXTURES / 'toy_depth_config.py')!r}),\n"
                        "          dict(name='board', kind='leaderboard', depends_on=['depth'], formats=['md'],\n"
                        "               paper=False)]\n")
    out = run([sys.executable, 'tools/pipeline.py', pipeline])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    stage = tmp_path / 'runs' / 'vit_demo_patch8_64' / 'depth'
    assert ' --imports toy_depth\n' in (stage / 'pipeline.log').read_text()  # the end of its command line
    record = json.loads((stage / 'result.json').read_text())
    delta1 = record['metrics']['delta1']
    assert record['task'] == 'toy_depth' and (delta1 * 8 / 100).is_integer()  # a fraction of 8 images, in percent
    assert re.search(r'depth: ok.*delta1 [\d.]+, abs_rel [\d.]+', out.stdout)  # the summary: both headline metrics
    board = (tmp_path / 'runs' / 'leaderboard.md').read_text()
    assert '| ToyRoom-demo δ1 | ToyRoom-demo AbsRel |' in board and f'| {delta1:.1f} |' in board


# ---------------------------------------------------------------------------------------------- the guide

def guide_blocks(language: str):
    return re.findall(rf'```{language}\n(.*?)```', GUIDE.read_text(), re.S)


@pytest.mark.slow
def test_the_guide_as_written_trains_a_task_from_outside_and_shows_it_on_the_board(tmp_path):
    """Each Python block of docs/extending-task.md goes to the file its first line names, the toy pieces its step 2
    names are copied beside them, and its step 6 commands run from that folder."""
    written = []
    for block in guide_blocks('python'):
        target = re.match(r'# (\S+\.py)\n', block)
        assert target, f'a Python block of the guide names no file in its first line:\n{block}'
        path = tmp_path / target.group(1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block)
        written.append(target.group(1))
    assert sorted(written) == ['depth_config.py', 'my_depth/__init__.py', 'my_depth/metrics.py',
                               'my_depth/record.py']
    guide = GUIDE.read_text()
    for piece in ('datasets.py', 'model.py'):  # step 2: "copy the toy task's ... into my_depth/"
        assert f'`tests/toy_fixtures/toy_depth/{piece}`' in guide
        shutil.copy(TOY / piece, tmp_path / 'my_depth' / piece)
    commands = [line for block in guide_blocks('bash') for line in block.splitlines() if line.strip()]
    assert [c.split()[1] for c in commands] == ['vitbench-train', 'vitbench-leaderboard']
    for command in commands:
        words = shlex.split(command)
        env = dict(os.environ, **dict(w.split('=', 1) for w in words[:1]))  # PYTHONPATH=. from that folder
        tool = Path(sys.executable).parent / words[1]  # the console script of this environment
        out = subprocess.run([str(tool), *words[2:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, f'{command}\n{out.stdout[-2000:]}{out.stderr[-3000:]}'
    record = json.loads((tmp_path / 'work_dirs' / 'my_depth' / 'result.json').read_text())
    assert record['task'] == 'depth' and 0 <= record['metrics']['delta1'] <= 100
    board = (tmp_path / 'work_dirs' / 'my_depth' / 'leaderboard.md').read_text()
    assert '| ToyRoom-demo δ1 | ToyRoom-demo AbsRel |' in board
    out = subprocess.run([sys.executable, str(REPO / 'tools' / 'leaderboard.py'), 'work_dirs/my_depth'], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # "without --imports it ... says why"
    assert out.returncode == 2 and "key 'task' is 'depth', expected one of" in out.stderr


# ---------------------------------------------------------------------------------------------- the count

SUITE = ('backbones', 'pretrain', 'downstream', 'vitbench', 'harness', 'tools')
# the one table a task may join: the backbone swap's adapters, for a dense head (docs/extending-task.md, step 5)
ADAPTER_TABLE = 'downstream/backbone_swap.py'
# comparisons of a run's task with a built-in name that no new task changes: a pre-training's own checkpoint
# metadata, and the dense benchmark's --dense-tasks option
KNOWN_COMPARISONS = {('pretrain/export.py', 'pretrain'), ('downstream/analysis/keep_blocks.py', 'pretrain'),
                     ('tools/test.py', 'pretrain'), ('downstream/benchmark.py', 'det')}


def _suite_modules():
    """Every module of the suite but the task records (a package's record.py)."""
    for package in SUITE:
        for path in sorted((REPO / package).rglob('*.py')):
            if path.name != 'record.py':
                yield path.relative_to(REPO).as_posix(), path.read_text()


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
    assert not tables, 'task or kind names listed outside the task records:\n' + '\n'.join(tables)


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


def test_the_bottom_layer_names_no_task_package():
    """vitbench/ knows the records' vocabulary only: no module of it names a task package (the registries' locations
    name the layer package ``downstream``, whose __init__ imports its tasks)."""
    named = [f'{p.relative_to(REPO)}: {m}' for p in sorted((REPO / 'vitbench').rglob('*.py'))
             for m in re.findall(r"'(downstream\.\w+)", p.read_text())]
    assert not named, '\n'.join(named)


def test_the_guide_names_the_files_a_task_adds_and_each_exists():
    guide = GUIDE.read_text()
    for path in ('vitbench/results/schema.py', 'downstream/__init__.py', 'downstream/backbone_swap.py',
                 'harness/tasks.py', 'pretrain/record.py', 'downstream/seg/record.py',
                 'tests/toy_fixtures/toy_depth/datasets.py', 'tests/test_extending_task.py'):
        assert f'`{path}`' in guide and (REPO / path).is_file()
    demo = {(text.split("dataset='")[1].split("'")[0]) for path in (REPO / 'configs' / 'demo').glob('*.py')
            for text in [path.read_text()] if "experiment = dict(task=" in text and "dataset='" in text}
    assert demo <= {d for task in schema.TASKS.values() for d in task.demo_datasets}  # the records' demo datasets
