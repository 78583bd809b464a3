"""The pipeline's ETA (issue 47): the expected cost of every stage still to run, measured where it can be (the same
stage's earlier run, the stages of the same name that finished), else an estimate by kind; printed at the start, on
each stage's lines and with the heartbeat, and updated as stages finish (harness/pipeline/eta.py)."""
import json
import re

from _pipeline_helpers import fake, in_repo, run, write_pipeline  # noqa: F401 (in_repo: a fixture)
from harness.pipeline.dag import Pipeline, Stage
from harness.pipeline.eta import ESTIMATE_S, Eta, duration


def _stage(stage_id, name, kind='train', deps=(), work_dir='/nonexistent'):
    return Stage(id=stage_id, name=name, kind=kind, spec={}, work_dir=work_dir, deps=list(deps))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def test_measured_costs_of_the_same_stage_replace_the_estimates(tmp_path):
    """Two backbones, each pre-trained then fine-tuned: once the first pre-training took 50 s, the second is
    expected to take as long, and the fine-tunings keep the estimate of a training until one of them finished."""
    stages = [_stage('a/pre', 'pre'), _stage('a/ft', 'ft', deps=['a/pre']),
              _stage('b/pre', 'pre'), _stage('b/ft', 'ft', deps=['b/pre']), _stage('board', 'board', 'leaderboard')]
    pipeline = Pipeline(path='p.py', work_dir=str(tmp_path), backbones=['a', 'b'], stages=stages)
    clock = Clock()
    eta = Eta(pipeline, jobs=1, clock=clock)
    assert eta.remaining() == 4 * ESTIMATE_S['train'] + ESTIMATE_S['leaderboard']
    assert eta.counts() == (0, 5)
    eta.started(stages[0])
    clock.now += 30  # a running stage has used part of what it is expected to take
    assert eta.remaining() == 4 * ESTIMATE_S['train'] - 30 + ESTIMATE_S['leaderboard']
    clock.now += 20
    eta.ended(stages[0], 'ran', 50.0)
    assert eta.remaining() == 50.0 + 2 * ESTIMATE_S['train'] + ESTIMATE_S['leaderboard']  # b/pre: measured
    assert eta.counts() == (1, 3)
    eta.ended(stages[1], 'ran', 8.0)
    assert eta.remaining() == 50.0 + 8.0 + ESTIMATE_S['leaderboard']
    # a failed pre-training skips its fine-tuning (not the leaderboard, which tabulates what finished)
    eta.ended(stages[2], 'failed', 3.0)
    assert eta.remaining() == ESTIMATE_S['leaderboard'] and eta.counts() == (0, 1)
    assert re.fullmatch(r'pipeline ETA 10s \(~\d\d:\d\d; 1 estimated\)', eta.line())
    eta.ended(stages[4], 'ran', 1.0)
    assert eta.line() == ''
    # stages that run at the same time share the work left
    assert Eta(pipeline, jobs=2, clock=clock).remaining() == (4 * ESTIMATE_S['train'] + ESTIMATE_S['leaderboard']) / 2


def test_an_earlier_run_in_the_work_dir_gives_the_costs(tmp_path):
    """pipeline_summary.json of an earlier run: a stage that runs again expects what it took then; result.json's
    cost of a stage done before: what the stages of its name expect."""
    done = tmp_path / 'a' / 'pre'
    done.mkdir(parents=True)
    (done / 'result.json').write_text(json.dumps(dict(cost=dict(wall_s=40.0))))
    (tmp_path / 'pipeline_summary.json').write_text(json.dumps(dict(stages=[
        dict(id='a/ft', status='ran', seconds=12.0), dict(id='b/ft', status='failed', seconds=2.0)])))
    stages = [_stage('a/pre', 'pre', work_dir=str(done)), _stage('a/ft', 'ft', deps=['a/pre']),
              _stage('b/pre', 'pre'), _stage('b/ft', 'ft', deps=['b/pre'])]
    pipeline = Pipeline(path='p.py', work_dir=str(tmp_path), backbones=['a', 'b'], stages=stages)
    eta = Eta(pipeline, jobs=1, done_before=['a/pre'], clock=Clock())
    assert [eta.costs.source(s) for s in stages[1:]] == [(12.0, 'measured'), (40.0, 'measured'), (12.0, 'measured')]
    assert eta.remaining() == 12.0 + 40.0 + 12.0 and eta.counts() == (3, 0)


def test_the_eta_appears_with_the_stage_lines_and_the_heartbeat_and_updates(tmp_path):
    path = write_pipeline(tmp_path, [fake('a'), fake('b', depends_on=['a'])])
    _, results, out = run(path, heartbeat=0)
    assert {r.status for r in results.values()} == {'ran'}
    lines = out.splitlines()
    estimate = ESTIMATE_S['command']
    assert re.fullmatch(rf'pipeline ETA {duration(2 * estimate)} \(~\d\d:\d\d; 2 estimated\)', lines[1])
    assert re.search(rf'^\[1/2\] a: running, log .*; pipeline ETA {duration(2 * estimate)} ', out, re.M)
    assert re.search(r'^    Epoch\(train\) \[1\]\[1/1\] loss: 0.5 \| pipeline ETA ', out, re.M)  # the heartbeat
    # a has ended: b is what is left
    assert re.search(rf'^\[1/2\] a: ok in \d+s, mIoU 1.00; pipeline ETA {duration(estimate)} \(~\d\d:\d\d; 1 estimated\)$',
                     out, re.M)
    assert re.search(r'^\[2/2\] b: ok in \d+s, mIoU 1.00$', out, re.M)  # nothing left: no ETA
    # run again with b to redo: its cost is what it took in the run above (pipeline_summary.json)
    (tmp_path / 'b' / 'result.json').unlink()
    _, _, out = run(path, heartbeat=0)
    assert re.search(r'^pipeline ETA \d+s \(~\d\d:\d\d; 1 stage measured\)$', out, re.M)
