"""tools/pipeline.py: the DAG is checked before anything runs, stages whose result.json exists are skipped,
a failing stage skips its dependents while the others go on, --resume continues an interrupted training, seeds
run each training once per seed on the same seed's dependencies, and the shipped pipeline configs (demo,
paper_deit3, paper_maelite) are consistent."""
import io
import json
import os
import runpy
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import pytest

from vitbench.pipeline.command import command_of
from vitbench.pipeline.record import RECORD_NAME, changes, is_done, write_record
from vitbench.pipeline.run import PipelineRunner
from vitbench.pipeline.spec import PipelineError, load_pipeline

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / 'toy_fixtures'
DEMO = 'vit_demo_patch8_64'

# A fake stage: writes a result.json like a real run (or fails), records that it ran, and can be slow.
FAKE_STAGE = textwrap.dedent('''\
    import json, os, sys, time
    work_dir, task, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
    os.makedirs(work_dir, exist_ok=True)
    with open(os.path.join(work_dir, 'ran'), 'a') as f:
        f.write('x')
    print('Epoch(train) [1][1/1] loss: 0.5', flush=True)
    if task == 'fail':
        sys.exit('stage broke on purpose')
    if task == 'crash':  # as every training crashed on a GPU machine when CUDA state crossed a fork
        raise RuntimeError('Cannot re-initialize CUDA in forked subprocess')
    metric = dict(seg='mIoU', det='bbox_mAP', transfer='top1', pretrain='loss')[task]
    record = dict(task=task, dataset='toy', backbone='vit_demo_patch8_64', backbone_overrides={},
                  pretrain=dict(recipe='mae', epochs=1, checkpoint=None),
                  metrics={metric: value}, eval='ss', params_M=1.0, gflops=0.1, config='fake', git_commit=None,
                  created='2026-01-01T00:00:00+00:00')
    with open(os.path.join(work_dir, 'result.json'), 'w') as f:
        json.dump(record, f)
''')


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)  # pipeline configs name configs/... and data/... from the repository root


def fake(name, task='seg', value=1.0, depends_on=(), **extra):
    return dict(name=name, kind='command', argv=['{root}/fake_stage.py', '{work_dir}', task, str(value)],
                creates='{work_dir}/result.json', depends_on=list(depends_on), **extra)


def write_pipeline(tmp_path, stages, **top):
    (tmp_path / 'fake_stage.py').write_text(FAKE_STAGE)
    path = tmp_path / 'pipeline.py'
    lines = [f'work_dir = {str(tmp_path)!r}', f'stages = {stages!r}'] + [f'{k} = {v!r}' for k, v in top.items()]
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def run(path, **kwargs):
    out = io.StringIO()
    runner = PipelineRunner(load_pipeline(path), out=out, **kwargs)
    results = {r.id: r for r in runner.run()}
    return runner, results, out.getvalue()


def ran_count(tmp_path, name):
    marker = tmp_path / name / 'ran'
    return len(marker.read_text()) if marker.exists() else 0


# ---------------------------------------------------------------------------------------------- running

def test_failing_stage_skips_its_dependents_and_the_others_continue(tmp_path):
    path = write_pipeline(tmp_path, [
        fake('pre'),
        fake('broken', 'fail', depends_on=['pre']),
        fake('after_broken', depends_on=['broken']),
        fake('after_after', depends_on=['after_broken']),
        fake('independent', 'transfer', 88.5, depends_on=['pre']),
        dict(name='leaderboard', kind='leaderboard', depends_on=['pre', 'after_after', 'independent'],
             runs=['{root}'], formats=['md']),
    ])
    runner, results, out = run(path)
    status = {k: r.status for k, r in results.items()}
    assert status == dict(pre='ran', broken='failed', after_broken='blocked', after_after='blocked',
                          independent='ran', leaderboard='ran')
    assert not runner.ok
    assert 'exit status 1' in results['broken'].detail and 'stage broke on purpose' in out  # the log's end
    assert ran_count(tmp_path, 'after_broken') == 0 and ran_count(tmp_path, 'independent') == 1
    assert results['independent'].metric == 'top1 88.50'
    # the summary: one line per stage, written to the console and to pipeline_summary.json
    summary = out.split('\nsummary (')[1]
    for stage in status:
        assert stage in summary
    saved = json.loads((tmp_path / 'pipeline_summary.json').read_text())
    assert {s['id']: s['status'] for s in saved['stages']} == status
    # the leaderboard runs anyway and tabulates what finished
    board = (tmp_path / 'leaderboard.md').read_text()
    assert '88.5' in board and 'Paper reference results' in board


def test_a_leaderboard_whose_stages_all_failed_says_which_and_why_one_line_each(tmp_path):
    """Not only 'baseline scratch matches no row' (which hid the cause on the first GPU machine): each stage it
    tabulates without, and the error that stopped it."""
    path = write_pipeline(tmp_path, [
        fake('sup', 'crash'), fake('scratch', 'crash'),
        dict(name='leaderboard', kind='leaderboard', depends_on=['sup', 'scratch'], runs=['{root}'], formats=['md'],
             baseline='scratch'),
    ])
    _, results, out = run(path)
    assert results['sup'].detail == 'exit status 1: RuntimeError: Cannot re-initialize CUDA in forked subprocess'
    for stage in ('sup', 'scratch'):
        assert (f'leaderboard: without {stage}, which did not finish (failed: exit status 1: RuntimeError: Cannot '
                're-initialize CUDA in forked subprocess)') in out
    failed = next(line for line in out.splitlines() if 'leaderboard: FAILED' in line)
    assert 'FAILED: 2 of the 2 stages it tabulates did not finish (above); ' in failed and 'scratch' in failed
    assert results['leaderboard'].status == 'failed'


def test_stages_with_a_result_are_skipped_on_the_next_run(tmp_path):
    path = write_pipeline(tmp_path, [fake('a'), fake('b', depends_on=['a']), fake('c', 'fail', depends_on=['a'])])
    run(path)
    (tmp_path / 'c' / 'ran').unlink()
    _, results, out = run(path)
    assert results['a'].status == results['b'].status == 'cached' and 'a: done before, skipped' in out
    assert ran_count(tmp_path, 'a') == ran_count(tmp_path, 'b') == 1
    assert results['c'].status == 'failed' and ran_count(tmp_path, 'c') == 1  # what failed is tried again
    (tmp_path / 'b' / 'result.json').unlink()  # a stage whose result is gone runs again
    _, results, _ = run(path)
    assert results['b'].status == 'ran' and ran_count(tmp_path, 'b') == 2


WAIT_FOR_SIBLING = textwrap.dedent('''\
    import os, sys, time
    mine, sibling = sys.argv[1], sys.argv[2]
    open(mine, 'w').close()
    deadline = time.time() + 60
    while not os.path.exists(sibling):  # only finishes when the other stage runs at the same time
        if time.time() > deadline:
            sys.exit('the sibling stage never started')
        time.sleep(0.05)
''')


def test_jobs_run_independent_stages_at_the_same_time(tmp_path):
    (tmp_path / 'wait.py').write_text(WAIT_FOR_SIBLING)
    meet = [dict(name=n, kind='command', argv=['{root}/wait.py', f'{{root}}/{n}.started', f'{{root}}/{other}.started'],
                 depends_on=['pre']) for n, other in (('a', 'b'), ('b', 'a'))]
    path = write_pipeline(tmp_path, [fake('pre'), *meet, fake('post', depends_on=['a', 'b'])], jobs=2)
    runner, results, out = run(path)
    assert runner.jobs == 2 and '2 at a time' in out
    assert {k: r.status for k, r in results.items()} == dict(pre='ran', a='ran', b='ran', post='ran')
    assert ran_count(tmp_path, 'post') == 1


def test_missing_declared_output_is_a_failure(tmp_path):
    path = write_pipeline(tmp_path, [fake('pre', outputs=['backbone.pth']), fake('down', depends_on=['pre'])])
    _, results, _ = run(path)
    assert results['pre'].status == 'failed' and 'backbone.pth' in results['pre'].detail
    assert results['down'].status == 'blocked'


def test_progress_lines_show_while_a_stage_runs(tmp_path):
    path = write_pipeline(tmp_path, [fake('a')])
    _, _, out = run(path, heartbeat=0)
    assert 'Epoch(train) [1][1/1]' in out
    assert 'Epoch(train)' in (tmp_path / 'a' / 'pipeline.log').read_text()


def toy_pipeline(tmp_path, max_iters=4):
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_config.py')!r}]\n"
                      f"experiment = dict(task='pretrain', dataset='toy', backbone={DEMO!r})\n")
    return write_pipeline(tmp_path, [dict(name='toy', config=str(config), metric='loss',
                                          cfg_options={'train_cfg.max_iters': max_iters})],
                          backbones=[DEMO])


def test_train_stage_runs_tools_train_and_resumes_with_resume(tmp_path, monkeypatch):
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    path = toy_pipeline(tmp_path)
    _, results, out = run(path)
    work_dir = tmp_path / DEMO / 'toy'
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert results[f'{DEMO}/toy'].metric.startswith('loss ')
    record = json.loads((work_dir / 'result.json').read_text())
    assert record['task'] == 'pretrain' and (work_dir / 'iter_4.pth').exists()
    # interrupted after its checkpoint, before the result: --resume continues from iter 4, not from 0
    (work_dir / 'result.json').unlink()
    pipeline = load_pipeline(path)
    assert '--resume' in command_of(pipeline, pipeline.stages[0], resume=True)
    assert '--resume' not in command_of(pipeline, pipeline.stages[0], resume=False)
    _, results, out = run(path, resume=True)
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert 'resumed' in (work_dir / 'pipeline.log').read_text().split('===')[-1]
    assert (work_dir / 'result.json').exists()


# ---------------------------------------------------------------------------------------------- changed recipes

def recorded_pair(tmp_path, seg_options=None, data_value=1.0):
    """Data, a pre-training on it and a segmentation built on that, the last two finished (result.json) under
    their recorded recipe."""
    pre, seg = tmp_path / 'pre.py', tmp_path / 'seg.py'
    for config, task in ((pre, 'pretrain'), (seg, 'seg')):
        if not config.exists():
            config.write_text(f"experiment = dict(task={task!r}, dataset='toy', backbone={DEMO!r})\nx = 1\n")
    path = write_pipeline(tmp_path, [
        fake('data', value=data_value),
        dict(name='pre', config=str(pre), depends_on=['data']),
        dict(name='seg', config=str(seg), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options=seg_options or {'a.b': 1}),
    ], backbones=[DEMO])
    return path


def finish(pipeline):
    for stage in [s for s in pipeline.stages if s.kind == 'train']:
        os.makedirs(stage.work_dir, exist_ok=True)
        Path(stage.work_dir, 'result.json').write_text('{}')
        write_record(pipeline, stage)


def test_a_stage_whose_recipe_changed_is_not_done_nor_are_the_stages_built_on_it(tmp_path):
    pipeline = load_pipeline(recorded_pair(tmp_path))
    finish(pipeline)
    pre, seg = (pipeline.stage(f'{DEMO}/{n}') for n in ('pre', 'seg'))
    assert is_done(pipeline, pre) and is_done(pipeline, seg)
    # a comment or a reformatting is no change: the record holds the config's values, not its text
    (tmp_path / 'pre.py').write_text((tmp_path / 'pre.py').read_text().replace('x = 1', 'x  =  1  # same'))
    pipeline = load_pipeline(recorded_pair(tmp_path))
    assert all(is_done(pipeline, s) for s in pipeline.stages if s.kind == 'train')
    # a value of a _base_ file changes the stage that inherits it, and the stage built on it
    base = tmp_path / 'schedule.py'
    base.write_text('epochs = 20\n')
    (tmp_path / 'pre.py').write_text(f"_base_ = [{str(base)!r}]\n" + (tmp_path / 'pre.py').read_text())
    finish(load_pipeline(recorded_pair(tmp_path)))
    base.write_text('epochs = 40\n')
    pipeline = load_pipeline(recorded_pair(tmp_path))
    pre, seg = (pipeline.stage(f'{DEMO}/{n}') for n in ('pre', 'seg'))
    assert changes(pipeline, pre) == [f'config {tmp_path / "pre.py"} changed']
    assert changes(pipeline, seg) == [f"'{DEMO}/pre' (a dependency) changed"]
    assert not is_done(pipeline, pre) and not is_done(pipeline, seg)
    plan = '\n'.join(PipelineRunner(pipeline, out=io.StringIO()).plan())
    assert f'{DEMO}/seg (train; to run again from the start: \'{DEMO}/pre\' (a dependency) changed)' in plan
    # a stage's own options change it alone
    finish(pipeline)
    pipeline = load_pipeline(recorded_pair(tmp_path, seg_options={'a.b': 2}))
    assert is_done(pipeline, pipeline.stage(f'{DEMO}/pre'))
    assert changes(pipeline, pipeline.stage(f'{DEMO}/seg')) == ['cfg_options changed']
    # what a command made is not tracked: its argv does not say (the demo data's names its worker count)
    finish(pipeline)
    pipeline = load_pipeline(recorded_pair(tmp_path, seg_options={'a.b': 2}, data_value=2.0))
    assert all(is_done(pipeline, s) for s in pipeline.stages if s.kind == 'train')
    # a folder with no record (run by hand, or before records existed) is judged by its result.json alone
    os.remove(os.path.join(pipeline.stage(f'{DEMO}/seg').work_dir, RECORD_NAME))
    assert is_done(pipeline, pipeline.stage(f'{DEMO}/seg'))


def test_a_config_holding_a_function_has_the_same_recipe_in_every_run(tmp_path):
    """A lazy-import config may hold classes or functions: the recipe names them, never by their address, which
    differs from process to process (else such a stage would run again every time)."""
    (tmp_path / 'pre.py').write_text(f"experiment = dict(task='pretrain', dataset='toy', backbone={DEMO!r})\n"
                                     'post = dict(fn=lambda x: x, type=dict)\n')
    path = recorded_pair(tmp_path)
    digest = ('from vitbench.pipeline.spec import load_pipeline; '
              f'print(load_pipeline({path!r}).stage({DEMO + "/pre"!r}).config_digest)')
    digests = {subprocess.run([sys.executable, '-c', digest], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout for _ in range(2)}
    assert len(digests) == 1 and len(digests.pop().strip()) == 64


def test_a_changed_training_runs_again_from_the_start_even_with_resume(tmp_path, monkeypatch):
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    _, results, out = run(toy_pipeline(tmp_path, max_iters=4))
    work_dir = tmp_path / DEMO / 'toy'
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert json.loads((work_dir / RECORD_NAME).read_text())['recipe']['cfg_options'] == {'train_cfg.max_iters': 4}
    _, results, out = run(toy_pipeline(tmp_path, max_iters=6), resume=True)
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert 'its recipe changed since it ran (cfg_options changed): it runs again from the start' in out
    log = (work_dir / 'pipeline.log').read_text().split('===')[-1]
    assert '--resume' not in log.splitlines()[0] and 'resumed' not in log  # not continued from iter 4 of the old
    assert json.loads((work_dir / 'result.json.stale').read_text())['task'] == 'pretrain'  # the old result, kept
    assert (work_dir / 'last_checkpoint').read_text().strip().endswith('iter_6.pth')
    _, results, _ = run(toy_pipeline(tmp_path, max_iters=6))
    assert results[f'{DEMO}/toy'].status == 'cached'


# ---------------------------------------------------------------------------------------------- commands

def test_commands_pass_dependency_outputs_swaps_and_options(tmp_path):
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='ade20k', backbone={DEMO!r})\n")
    path = write_pipeline(tmp_path, [
        dict(name='pre', config=str(config)),
        dict(name='seg', config=str(config), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options={'a.b': 1, 'c': [1, 2], 'd': None, 'e': 'x_{backbone}'}, args=['--amp']),
        dict(name='seg_ms', kind='test', config=str(config), depends_on=['pre', 'seg'],
             weights='{seg.last_checkpoint}', tta=True, checkpoint='{pre}/backbone.pth'),
    ], backbones=[DEMO, 'deit3_small_patch16_224'])
    pipeline = load_pipeline(path)
    assert [s.id for s in pipeline.stages] == [f'{b}/{n}' for n in ('pre', 'seg', 'seg_ms')
                                               for b in (DEMO, 'deit3_small_patch16_224')]
    seg = pipeline.stage('deit3_small_patch16_224/seg')
    argv = command_of(pipeline, seg)
    assert argv[:3] == [sys.executable, str(REPO / 'tools' / 'train.py'), str(config)]
    pre_dir = os.path.join(str(tmp_path), 'deit3_small_patch16_224', 'pre')
    assert argv[argv.index('--work-dir') + 1] == os.path.join(str(tmp_path), 'deit3_small_patch16_224', 'seg')
    assert argv[argv.index('--checkpoint') + 1] == os.path.join(pre_dir, 'backbone.pth')
    assert argv[argv.index('--backbone') + 1] == 'deit3_small_patch16_224'  # the config is for the demo ViT
    assert '--amp' in argv
    assert argv[argv.index('--cfg-options') + 1:] == ['a.b=1', 'c=[1,2]', 'd=None', 'e=x_deit3_small_patch16_224']
    assert '--backbone' not in command_of(pipeline, pipeline.stage(f'{DEMO}/seg'))  # the config's own backbone
    test = pipeline.stage(f'{DEMO}/seg_ms')
    with pytest.raises(PipelineError, match='left no checkpoint'):
        command_of(pipeline, test)
    seg_dir = Path(pipeline.stage(f'{DEMO}/seg').work_dir)
    seg_dir.mkdir(parents=True)
    (seg_dir / 'last_checkpoint').write_text(str(seg_dir / 'iter_9.pth'))
    argv = command_of(pipeline, test)
    assert argv[1].endswith('tools/test.py') and argv[3] == str(seg_dir / 'iter_9.pth') and '--tta' in argv
    assert f"experiment.checkpoint={os.path.join(str(tmp_path), DEMO, 'pre', 'backbone.pth')}" in argv
    pipeline.launcher = ['torchrun', '--nproc_per_node', '8']
    argv = command_of(pipeline, seg)
    assert argv[:4] == ['torchrun', '--nproc_per_node', '8', str(REPO / 'tools' / 'train.py')]
    assert argv[argv.index('--launcher') + 1] == 'pytorch'


# ---------------------------------------------------------------------------------------------- seeds

def seeded_pipeline(tmp_path, **top):
    """pre-training -> segmentation -> its multi-scale test, a teacher trained once and a student of it."""
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='ade20k', backbone={DEMO!r})\n")
    return write_pipeline(tmp_path, [
        fake('data'),
        dict(name='pre', config=str(config), depends_on=['data'], outputs=['backbone.pth']),
        dict(name='seg', config=str(config), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options={'a.b': 1}),
        dict(name='seg_ms', kind='test', config=str(config), depends_on=['seg'], weights='{seg.last_checkpoint}'),
        dict(name='teacher', config=str(config), per_backbone=False, seeds='shared'),
        dict(name='student', config=str(config), depends_on=['teacher'],
             cfg_options={'model.teacher.checkpoint': '{teacher}/backbone.pth', 'randomness.seed': 7}),
        dict(name='leaderboard', kind='leaderboard', depends_on=['seg_ms', 'student']),
    ], backbones=[DEMO], **top)


def cfg_options(argv):
    return argv[argv.index('--cfg-options') + 1:] if '--cfg-options' in argv else []


def test_seeds_run_each_train_and_test_stage_once_per_seed_on_the_same_seeds_dependencies(tmp_path):
    pipeline = load_pipeline(seeded_pipeline(tmp_path, seeds=[0, 1]))
    assert pipeline.seeds == [0, 1]
    per_seed = [f'{DEMO}/{name}/seed{k}' for name in ('pre', 'seg', 'seg_ms') for k in (0, 1)]
    students = [f'{DEMO}/student/seed{k}' for k in (0, 1)]
    assert [s.id for s in pipeline.stages] == ['data', *per_seed, 'teacher', *students, 'leaderboard']
    seg = pipeline.stage(f'{DEMO}/seg/seed1')
    assert seg.seed == 1 and seg.work_dir == str(tmp_path / DEMO / 'seg' / 'seed1')
    assert seg.deps == [f'{DEMO}/pre/seed1'] and pipeline.stage(f'{DEMO}/pre/seed0').deps == ['data']
    argv = command_of(pipeline, seg)
    assert argv[argv.index('--checkpoint') + 1] == str(tmp_path / DEMO / 'pre' / 'seed1' / 'backbone.pth')
    assert cfg_options(argv) == ['a.b=1', 'randomness.seed=1']  # merged with the stage's own
    assert cfg_options(command_of(pipeline, pipeline.stage(f'{DEMO}/pre/seed0'))) == ['randomness.seed=0']
    assert not any('randomness' in a for a in command_of(pipeline, pipeline.stage('data')))  # commands: unseeded
    # {seg.last_checkpoint} of seed 1's test: seed 1's training
    seg_dir = tmp_path / DEMO / 'seg' / 'seed1'
    seg_dir.mkdir(parents=True)
    (seg_dir / 'last_checkpoint').write_text(str(seg_dir / 'iter_9.pth'))
    argv = command_of(pipeline, pipeline.stage(f'{DEMO}/seg_ms/seed1'))
    assert argv[3] == str(seg_dir / 'iter_9.pth') and cfg_options(argv) == ['randomness.seed=1']
    # seeds='shared': trained once with the first seed, in the usual folder; every seed's student uses it
    teacher = pipeline.stage('teacher')
    assert teacher.seed == 0 and teacher.work_dir == str(tmp_path / 'teacher')
    assert cfg_options(command_of(pipeline, teacher)) == ['randomness.seed=0']
    student = pipeline.stage(f'{DEMO}/student/seed1')
    assert student.deps == ['teacher']
    assert cfg_options(command_of(pipeline, student)) == [  # the pipeline's seed wins over the stage's own
        f"model.teacher.checkpoint={tmp_path / 'teacher' / 'backbone.pth'}", 'randomness.seed=1']
    # the leaderboard waits for, and tabulates, every seed
    board = pipeline.stage('leaderboard')
    assert board.deps == [f'{DEMO}/seg_ms/seed0', f'{DEMO}/seg_ms/seed1', *students]
    assert PipelineRunner(pipeline).leaderboard_runs(board, existing=False) == [
        str(tmp_path / DEMO / name / f'seed{k}') for name in ('seg_ms', 'student') for k in (0, 1)]


def test_one_seed_keeps_the_layout_and_no_seeds_add_nothing(tmp_path):
    path = seeded_pipeline(tmp_path)
    plain, one = load_pipeline(path), load_pipeline(path, seeds=[3])
    assert [s.id for s in one.stages] == [s.id for s in plain.stages]
    assert [s.work_dir for s in one.stages] == [s.work_dir for s in plain.stages]
    assert f'{DEMO}/seg' in plain.stage(f'{DEMO}/seg_ms').deps and plain.seeds == []
    seg, seg_one = plain.stage(f'{DEMO}/seg'), one.stage(f'{DEMO}/seg')
    assert seg.seed is None and cfg_options(command_of(plain, seg)) == ['a.b=1']
    assert seg_one.seed == 3 and cfg_options(command_of(one, seg_one)) == ['a.b=1', 'randomness.seed=3']


def pipeline_tool(*argv):
    """tools/pipeline.py's main, in this process."""
    return runpy.run_path(str(REPO / 'tools' / 'pipeline.py'))['main'](list(argv))


def test_tool_seeds_replace_the_configs_and_dry_run_shows_the_seeded_stages(tmp_path, capsys):
    path = seeded_pipeline(tmp_path, seeds=[0, 1])
    assert pipeline_tool(path, '--seeds', '4,5', '--baseline', 'mae', '--dry-run') == 0
    plan = capsys.readouterr().out
    assert f'{DEMO}/seg/seed5 (train; to run) after: {DEMO}/pre/seed5' in plan and 'randomness.seed=5' in plan
    assert 'seed0' not in plan and '(baseline: mae)' in plan


@pytest.mark.parametrize('argv, message', [
    (['--seeds', '0,a'], "--seeds '0,a': expected whole numbers separated by commas, e.g. 0,1,2"),
    (['--seeds', ''], '--seeds is [], expected a non-empty list of whole numbers'),
    (['--seeds', '1,2,1'], '--seeds is [1, 2, 1]: seed 1 is given twice'),
])
def test_tool_rejects_bad_seeds_in_one_line(tmp_path, capsys, argv, message):
    assert pipeline_tool(seeded_pipeline(tmp_path), *argv, '--dry-run') == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: {message}') and err.count('\n') == 1


@pytest.mark.parametrize('seeds, message', [
    ([], "key 'seeds' is [], expected a non-empty list of whole numbers"),
    ([0, 0], "key 'seeds' is [0, 0]: seed 0 is given twice"),
    (['0', 1], "key 'seeds' is ['0', 1], expected a non-empty list of whole numbers"),
    (3, "key 'seeds' is 3, expected a non-empty list of whole numbers"),
    ([-1], "key 'seeds' is [-1], expected a non-empty list of whole numbers from 0 to 2**32 - 1"),
])
def test_bad_seeds_in_the_config_name_the_file_and_key(tmp_path, seeds, message):
    path = seeded_pipeline(tmp_path, seeds=seeds)
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert str(info.value).startswith(f'{path}: {message}')


@pytest.mark.parametrize('stages, message', [
    ([dict(name='a', config='configs/demo/upernet_demo.py', seeds='each')], "stage 'a': key 'seeds' is 'each', "
     "expected 'shared'"),
    ([dict(fake('a'), seeds='shared')], "unknown key(s) ['seeds'] for a command stage"),
    ([dict(name='a', config='configs/demo/upernet_demo.py'),
      dict(fake('b', depends_on=['a']), argv=['{a}/x'], per_backbone=True)],
     "stage 'b': runs once for all seeds (a command or leaderboard stage, or seeds='shared') but refers to {a}, "
     "which runs once per seed; give 'a' seeds='shared' to run it once"),
    ([dict(name='lb', kind='leaderboard', baseline=['scratch'])], "key 'baseline' is ['scratch'], expected the name"),
])
def test_bad_seed_and_baseline_keys_name_the_stage(tmp_path, stages, message):
    path = write_pipeline(tmp_path, stages, backbones=[DEMO], seeds=[0, 1])
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert message in str(info.value) and path in str(info.value)


def test_leaderboard_passes_its_baseline_only_when_set(tmp_path, monkeypatch):
    import vitbench.results.render as render
    calls = []

    def write_leaderboard(runs, outputs, paper=True, **kwargs):  # the renderer, as the pipeline calls it
        calls.append(kwargs)
        return types.SimpleNamespace(rows=[], conflicts=[], rejected=[])

    monkeypatch.setattr(render, 'write_leaderboard', write_leaderboard)
    board = dict(name='leaderboard', kind='leaderboard', depends_on=['a'], formats=['md'])
    path = write_pipeline(tmp_path, [fake('a'), board])
    run(path)
    path = write_pipeline(tmp_path, [fake('a'), dict(board, baseline='scratch')])
    run(path)
    runner = PipelineRunner(load_pipeline(path, baseline='mae'), out=io.StringIO())
    runner.run()
    assert calls == [{}, {'baseline': 'scratch'}, {'baseline': 'mae'}]


# ---------------------------------------------------------------------------------------------- checks

@pytest.mark.parametrize('stages, message', [
    ([fake('a', depends_on=['b']), fake('b', depends_on=['a'])], 'cycle: a -> b -> a'),
    ([fake('a', depends_on=['nope'])], "depends_on names 'nope'"),
    ([fake('a'), fake('a')], "two stages are named 'a'"),
    ([fake('a'), dict(fake('b'), argv=['{a}/x'])], "uses {a} but does not depend on 'a'"),
    ([dict(fake('a'), argv=['{a.best}'])], 'a stage reference is {STAGE}'),
    ([dict(fake('a'), retries=2)], "unknown key(s) ['retries'] for a command stage"),
    ([dict(name='a', config='configs/nowhere.py')], "config file 'configs/nowhere.py' not found"),
    ([dict(name='a', config='tests/toy_fixtures/toy_config.py')], 'has no experiment'),
    ([dict(name='a', kind='test', config='configs/demo/upernet_demo.py')], "missing key 'weights'"),
    ([dict(name='bad-name', kind='command', argv=['x'])], "key 'name' is 'bad-name'"),
])
def test_bad_pipelines_name_the_stage_and_key(tmp_path, stages, message):
    path = write_pipeline(tmp_path, stages, backbones=[DEMO])
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert message in str(info.value) and path in str(info.value)


def test_unknown_backbone_lists_the_valid_names(tmp_path):
    path = write_pipeline(tmp_path, [dict(name='a', config='configs/demo/upernet_demo.py')], backbones=[DEMO])
    with pytest.raises(PipelineError, match="unknown backbone 'vit_demo_patch8_46'.*vit_demo_patch8_64"):
        load_pipeline(path, backbones=['vit_demo_patch8_46'])


def test_tool_reports_config_errors_with_exit_2(tmp_path):
    path = write_pipeline(tmp_path, [fake('a', depends_on=['zzz'])])
    result = subprocess.run([sys.executable, 'tools/pipeline.py', path], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "depends_on names 'zzz'" in result.stderr


# ---------------------------------------------------------------------------------------------- shipped configs

def test_demo_pipeline_is_a_consistent_dag():
    pipeline = load_pipeline('configs/pipelines/demo.py')
    assert pipeline.backbones == [DEMO] and pipeline.work_dir == 'work_dirs/demo' and not pipeline.launcher
    assert pipeline.jobs == 2
    ids = [s.id for s in pipeline.stages]
    assert ids[:2] == ['data', 'data_downstream'] and ids[-1] == 'leaderboard'
    position = {s.id: i for i, s in enumerate(pipeline.stages)}
    for stage in pipeline.stages:
        assert all(position[d] < position[stage.id] for d in stage.deps)
    pretrain = {'sup': 'configs/demo/sup_demo.py', 'mae': 'configs/demo/mae_demo.py',
                'dmae': 'configs/demo/dmae_demo.py'}
    for name, config in pretrain.items():
        stage = pipeline.stage(f'{DEMO}/{name}')
        assert stage.config == config and stage.spec['outputs'] == ['backbone.pth'] and stage.task == 'pretrain'
        assert 'data' in stage.deps
    dmae = pipeline.stage(f'{DEMO}/dmae')
    assert f'{DEMO}/mae' in dmae.deps
    assert f'model.teacher.checkpoint=work_dirs/demo/{DEMO}/mae/backbone.pth' in command_of(pipeline, dmae)
    tasks = dict(cifar10=('transfer', 'transfer_cifar10_demo'), flowers102=('transfer', 'transfer_flowers102_demo'),
                 upernet=('seg', 'upernet_demo'), maskrcnn=('det', 'maskrcnn_demo'))
    inits = dict(sup='sup', mae='mae', dmae='dmae', scratch=None)
    # Mask R-CNN for the two rows whose ordering the demo checks (the demo's 15 minutes; configs/pipelines/demo.py)
    assert {s.id for s in pipeline.stages if s.id.startswith(f'{DEMO}/maskrcnn')} == {
        f'{DEMO}/maskrcnn_sup', f'{DEMO}/maskrcnn_scratch'}
    for task, (kind, config) in tasks.items():
        for init, source in inits.items():
            if task == 'maskrcnn' and init in ('mae', 'dmae'):
                continue
            stage = pipeline.stage(f'{DEMO}/{task}_{init}')
            assert stage.config == f'configs/demo/{config}.py' and stage.task == kind and stage.swap is None
            assert 'data_downstream' in stage.deps
            argv = command_of(pipeline, stage)
            if source:
                assert f'{DEMO}/{source}' in stage.deps
                assert argv[argv.index('--checkpoint') + 1] == f'work_dirs/demo/{DEMO}/{source}/backbone.pth'
            else:
                assert '--checkpoint' not in argv and stage.deps == ['data_downstream']
    for stage in (s for s in pipeline.stages if s.kind == 'train'):
        argv = command_of(pipeline, stage)
        assert argv[argv.index('--amp') + 1] == 'auto'
        # one source of truth for the schedules: the demo configs' own, which the pipeline never shortens
        assert not any(a.startswith(('train_cfg', 'param_scheduler')) for a in stage.spec.get('cfg_options') or {})
    board = pipeline.stage('leaderboard')
    assert set(board.deps) == set(ids[:-1]) and board.spec['formats'] == ['md', 'html']
    expected = {(e['row'], e['over']): e['min_delta'] for e in board.spec['expect']}
    assert expected.keys() == {('supervised', 'scratch'), ('mae', 'scratch'), ('dmae', 'scratch')}
    # supervised pre-training ahead on every downstream column the demo measures (issue 17) but ADE20k-demo, where
    # one run of ten was behind scratch (docs/demo-signal.md, eighth round)
    assert set(expected['supervised', 'scratch']) == {'Flowers-102 top-1 (full)', 'CIFAR-10 top-1 (full)',
                                                      'COCO-demo box AP', 'COCO-demo mask AP'}
    assert set(expected['mae', 'scratch']) == set(expected['dmae', 'scratch']) == {'ADE20k-demo mIoU SS'}
    assert all(v > 0 for min_delta in expected.values() for v in min_delta.values())
    runner = PipelineRunner(pipeline)
    assert len(runner.leaderboard_runs(board, existing=False)) == 17  # every train stage, not stray folders


def test_demo_pipeline_trains_in_the_precision_vitbench_amp_names(monkeypatch):
    """--amp auto by default (bf16 where the hardware has it); VITBENCH_AMP=off trains every stage in float32, the
    check that the demo's orderings hold in float32 too (what an AVX2 CPU runs)."""
    def amp_args():
        trains = [s for s in load_pipeline(str(REPO / 'configs/pipelines/demo.py')).stages if s.kind == 'train']
        return {tuple(s.spec['args'][s.spec['args'].index('--amp'):][:2]) for s in trains}
    monkeypatch.delenv('VITBENCH_AMP', raising=False)
    assert amp_args() == {('--amp', 'auto')}
    monkeypatch.setenv('VITBENCH_AMP', 'off')
    assert amp_args() == {('--amp', 'off')}
    sys.path.insert(0, str(REPO / 'tools'))
    try:
        import train
        assert train.parse_args(['configs/demo/sup_demo.py', '--amp', 'off']).amp == 'off'
    finally:
        sys.path.remove(str(REPO / 'tools'))


def test_demo_pipeline_with_seeds_distils_each_seed_from_the_same_seeds_mae():
    pipeline = load_pipeline('configs/pipelines/demo.py', seeds=[0, 1, 2])
    assert len([s for s in pipeline.stages if s.kind == 'train']) == 3 * 17
    dmae = pipeline.stage(f'{DEMO}/dmae/seed2')
    assert f'model.teacher.checkpoint=work_dirs/demo/{DEMO}/mae/seed2/backbone.pth' in command_of(pipeline, dmae)
    board = pipeline.stage('leaderboard')
    assert board.spec['baseline'] == 'scratch'
    assert len(PipelineRunner(pipeline).leaderboard_runs(board, existing=False)) == 3 * 17


def test_demo_pipeline_swaps_the_backbone_of_every_experiment():
    pipeline = load_pipeline('configs/pipelines/demo.py', backbones=['deit3_small_patch16_224'])
    trains = [s for s in pipeline.stages if s.kind == 'train']
    assert len(trains) == 17 and all(s.swap == 'deit3_small_patch16_224' for s in trains)
    assert all(s.work_dir.startswith('work_dirs/demo/deit3_small_patch16_224/') for s in trains)


def test_demo_maelite_pipeline_runs_each_pretraining_its_transfers_and_the_analyses():
    pipeline = load_pipeline('configs/pipelines/demo_maelite.py')
    ids = {s.id for s in pipeline.stages}
    inits = ('mae', 'dmae', 'mocov3', 'deit_tiny')
    for init in inits:
        assert pipeline.stage(f'{DEMO}/{init}').spec['outputs'] == ['backbone.pth']
        assert {f'{DEMO}/flowers102_{init}', f'{DEMO}/cifar10_{init}'} <= ids
    assert pipeline.stage(f'{DEMO}/mocov3').config == 'configs/demo/mocov3_demo.py'
    analysis = pipeline.stage(f'{DEMO}/analysis')
    assert {f'{DEMO}/{i}' for i in inits} <= set(analysis.deps)
    keep = pipeline.stage(f'{DEMO}/keep_blocks')
    assert {f'{DEMO}/keep2_mae', f'{DEMO}/keep4_deit_tiny', f'{DEMO}/flowers102_scratch'} <= set(keep.deps)
    argv = command_of(pipeline, pipeline.stage(f'{DEMO}/keep2_mae'))
    assert argv[argv.index('--keep-blocks') + 1] == '2' and '--checkpoint' in argv
    board = pipeline.stage('leaderboard')
    assert board.spec['baseline'] == 'scratch' and f'{DEMO}/keep_blocks' in board.deps  # its figure, embedded
    assert not [d for d in board.deps if d.startswith(f'{DEMO}/keep') and d != f'{DEMO}/keep_blocks']  # no k runs


@pytest.mark.parametrize('config, backbones, n_stages', [
    ('configs/pipelines/paper_deit3.py', ['deit3_small_patch16_224', 'deit3_base_patch16_224'], 31),
    ('configs/pipelines/paper_maelite.py', ['vit_tiny12h_patch16_224'], 57),  # 45 + MAE-lite Table 3's 12
])
def test_paper_pipelines_are_consistent(config, backbones, n_stages):
    pipeline = load_pipeline(config)
    assert pipeline.backbones == backbones and len(pipeline.stages) == n_stages
    assert pipeline.launcher[0] == 'torchrun' and pipeline.stages[-1].kind == 'leaderboard'
    for stage in pipeline.stages:
        if stage.kind == 'train' and stage.spec.get('checkpoint'):
            assert any(pipeline.stage(d).spec.get('outputs') == ['backbone.pth'] for d in stage.deps)
    if 'deit3' in config:  # each size uses its own configs where they exist
        assert pipeline.stage('deit3_small_patch16_224/upernet').config == 'configs/upernet_deit3_s.py'
        assert pipeline.stage('deit3_base_patch16_224/upernet').swap is None
        assert pipeline.stage('deit3_base_patch16_224/transfer_cars').swap == 'deit3_base_patch16_224'
        assert pipeline.stage('deit3_base_patch16_224/upernet_ms').spec['tta']
    else:
        assert pipeline.stage('mae_base_teacher').backbone is None
        assert 'mae_base_teacher' in pipeline.stage('vit_tiny12h_patch16_224/dmae').deps


@pytest.mark.slow
@pytest.mark.demo_pipeline
def test_demo_pipeline_end_to_end(tmp_path):
    """What `make demo` runs (into a temporary work dir): measured rows for the supervised, MAE, distilled-MAE
    and scratch backbones with ADE20k and transfer filled (COCO for supervised and scratch), their price, the
    paired Δ against scratch, the cross-task rank, and the paper section apart."""
    start = time.time()
    result = subprocess.run([sys.executable, 'tools/pipeline.py', 'configs/pipelines/demo.py',
                             '--work-dir', str(tmp_path / 'demo')], cwd=REPO, capture_output=True, text=True,
                            timeout=3 * 3600)
    print(f'demo pipeline: {time.time() - start:.0f} s')
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    # the science, not only the wiring: supervised pre-training ahead of scratch on COCO-demo, CIFAR-10 and
    # Flowers-102, MAE and distilled MAE on ADE20k-demo, by the demo's thresholds
    assert 'leaderboard: ok, 4 rows, 0 conflicts, 6 expected orderings hold' in result.stdout
    board = (tmp_path / 'demo' / 'leaderboard.md').read_text()
    measured, paper = board.split('## Paper reference results (not measured here)')
    measured, deltas = measured.split('## Δ vs scratch (paired by seed)')
    deltas, rank = deltas.split('## Cross-task rank')
    header = next(line for line in measured.splitlines() if line.startswith('| backbone'))
    names = [c.strip() for c in header.strip('|').split('|')]
    # transfer columns name the fine-tuning mode, e.g. 'CIFAR-10 top-1 (full)'
    column_of = {want: next((n for n in names if n.startswith(want)), None)
                 for want in ('ADE20k-demo mIoU SS', 'COCO-demo box AP', 'COCO-demo mask AP', 'CIFAR-10 top-1',
                              'Flowers-102 top-1', 'ImageNet top-1 (A)', 'ImageNet top-1 (R)',
                              'ImageNet top-1 (sketch)', 'ImageNet mCE', 'ImageNet ECE')}
    assert None not in column_of.values(), (column_of, names)
    rows = {}
    for line in measured.splitlines():
        if line.startswith(f'| {DEMO} |'):
            cells = [c.strip().strip('*') for c in line.strip('|').split('|')]
            rows[cells[1]] = dict(zip(names, cells))
    assert set(rows) == {'supervised', 'mae', 'dmae', 'scratch'}
    metric_names = names[names.index('GFLOPs') + 1:names.index('pretrain dev-h')]
    for recipe, row in rows.items():
        for want in ('ADE20k-demo mIoU SS', 'CIFAR-10 top-1', 'Flowers-102 top-1'):
            assert row[column_of[want]] != '', (row, want)
        # Mask R-CNN runs for the two rows whose ordering the demo checks
        assert (row[column_of['COCO-demo box AP']] != '') == (recipe in ('supervised', 'scratch')), row
        # one seed: every measured cell with its interval over the test images
        assert all(' [' in row[n] and row[n].endswith(']') for n in metric_names if row[n]), row
        assert float(row['total dev-h']) > float(row['pretrain dev-h']) >= 0 and float(row['peak mem (MB)']) > 0
    # the robustness and calibration axis, on the supervised row (the one pre-trained with labels)
    assert all(rows['supervised'][column_of[want]] for want in ('ImageNet top-1 (A)', 'ImageNet top-1 (R)',
                                                                  'ImageNet top-1 (sketch)', 'ImageNet mCE',
                                                                  'ImageNet ECE'))
    assert float(rows['scratch']['pretrain dev-h']) == 0 < float(rows['supervised']['pretrain dev-h'])
    delta_rows = [line for line in deltas.splitlines() if line.startswith(f'| {DEMO} |')]
    assert [line.split('|')[2].strip() for line in delta_rows] == ['supervised', 'mae', 'dmae']
    # one seed: each downstream Δ paired by image, with its interval; supervised's exclude 0 (the thresholds)
    assert [line.count('(n=1, by image)') for line in delta_rows] == [5, 3, 3]
    assert delta_rows[0].count(') *') == 5
    # the cross-task rank of the four rows over the columns all four have, with the probability of each rank;
    # supervised first; the COCO columns named as left out
    ranked = [[c.strip() for c in line.strip('|').split('|')] for line in rank.splitlines()
              if line.startswith('| ') and line.split('|')[2].strip() == DEMO]
    assert [r[2] for r in ranked][0] == 'supervised' and sorted(r[2] for r in ranked) == sorted(rows)
    assert all(sum(float(p) for p in r[5:9]) == pytest.approx(1.0, abs=0.02) for r in ranked)
    assert 'Columns: ADE20k-demo mIoU SS (ade20k-demo)' in rank
    left_out = next(line for line in rank.splitlines() if line.startswith('Left out'))
    assert 'COCO-demo box AP' in left_out and 'COCO-demo mask AP' in left_out
    assert 'Table 6.12' in paper
    page = (tmp_path / 'demo' / 'leaderboard.html').read_text()
    assert page.count('data:image/png;base64,') >= 5
    assert 'Metric vs device-hours' in page and 'Δ vs scratch, paired by seed' in page


@pytest.mark.slow
@pytest.mark.demo_pipeline
def test_zoo_pipeline_ranks_two_timm_backbones_end_to_end(tmp_path):
    """configs/pipelines/zoo_demo.py: two of timm's tiny models (a ConvNeXt, a ViT) through the demo's four
    downstream experiments, one leaderboard row each with every column, their size and their price."""
    result = subprocess.run([sys.executable, 'tools/pipeline.py', 'configs/pipelines/zoo_demo.py',
                             '--work-dir', str(tmp_path / 'zoo')], cwd=REPO, capture_output=True, text=True,
                            timeout=3600)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-3000:]
    assert 'leaderboard: ok, 2 rows, 0 conflicts' in result.stdout
    board = (tmp_path / 'zoo' / 'leaderboard.md').read_text().split('## Paper reference results')[0]
    header = next(line for line in board.splitlines() if line.startswith('| backbone'))
    names = [c.strip() for c in header.strip('|').split('|')]
    rows = {cells[0]: dict(zip(names, cells)) for cells in
            ([c.strip().strip('*') for c in line.strip('|').split('|')] for line in board.splitlines()
             if line.startswith('| timm:'))}
    assert set(rows) == {'timm:test_convnext', 'timm:test_vit'}
    for row in rows.values():
        assert all(row[n] != '' for n in names), row  # every column filled: metrics, params, GFLOPs, cost
        assert row['pretraining'] == 'scratch' and float(row['total dev-h']) > 0
    assert float(rows['timm:test_convnext']['params (M)']) == pytest.approx(0.2071, abs=1e-4)  # timm's count


def test_a_stage_for_some_families_is_left_out_for_others_with_its_dependents(capsys):
    """MAE needs a ViT: with a PatchConvNet the demo leaves out MAE, dMAE and what starts from them, says so,
    and keeps the supervised and scratch stages (the leaderboard depends only on the ones that run)."""
    pipeline = load_pipeline('configs/pipelines/demo.py', backbones=['patchconvnet_demo_64', DEMO])
    ids = {s.id for s in pipeline.stages}
    other = 'patchconvnet_demo_64'
    gone = {f'{other}/{n}' for n in ('mae', 'dmae')} | {f'{other}/{t}_{i}' for t in ('upernet', 'flowers102',
                                                                                    'cifar10')
                                                       for i in ('mae', 'dmae')}  # Mask R-CNN: sup, scratch
    assert not gone & ids and len(pipeline.left_out) == len(gone) == 8
    assert f'{other}/mae: left out, it runs on vit backbones, not patchconvnet' in pipeline.left_out
    assert f'{other}/upernet_dmae: left out, it needs {other}/dmae' in pipeline.left_out
    assert {f'{other}/sup', f'{other}/upernet_sup', f'{other}/upernet_scratch', f'{DEMO}/mae',
            f'{DEMO}/upernet_dmae'} <= ids  # the ViT keeps every stage
    assert set(pipeline.stage('leaderboard').deps) <= ids
    assert pipeline_tool('configs/pipelines/demo.py', '--backbones', other, '--dry-run') == 0
    assert f'{other}/cifar10_mae: left out, it needs {other}/mae' in capsys.readouterr().out


def test_families_must_name_known_backbone_families(tmp_path):
    path = write_pipeline(tmp_path, [dict(name='a', config='configs/demo/upernet_demo.py', families=['transformer'])],
                          backbones=[DEMO])
    with pytest.raises(PipelineError, match=r"stage 'a': key 'families' is \['transformer'\], expected a list of "
                                            r"backbone families from \['cait', "):
        load_pipeline(path)
