"""tools/pipeline.py running a pipeline: a failing stage skips its dependents while the others go on, stages
whose result.json exists are skipped, independent stages run at the same time, --resume continues an
interrupted training, and a leaderboard stage tabulates what finished.

The other pipeline tests: test_pipeline_spec.py (checks, commands), test_pipeline_recipe.py (changed recipes),
test_pipeline_seeds.py, test_pipeline_configs.py (the shipped pipeline configs)."""
import io
import json
import os
import textwrap
import types

from _pipeline_helpers import DEMO, fake, ran_count, run, toy_pipeline, write_pipeline
from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from _tool_helpers import FIXTURES
from harness.pipeline.command import command_of
from harness.pipeline.run import PipelineRunner
from harness.pipeline.spec import load_pipeline


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
    # the reader of the linked configs' protocols goes with every call (paper links need it: issue 45)
    from harness.experiment.linked_protocol import config_protocol
    assert all(c.pop('config_protocol') is config_protocol for c in calls)
    assert calls == [{}, {'baseline': 'scratch'}, {'baseline': 'mae'}]
