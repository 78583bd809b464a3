"""Issue 35.2, a diverged training is never a result: a non-finite loss stops the run (one line naming the iteration
and the last finite loss, exit status 3), its result.json says "status": "diverged" with no metrics, nothing is
exported, the leaderboard shows the cell as diverged (never a number), a checkpoint with non-finite weights is refused
by whatever would load it, and the pipeline reports the stage as diverged, skips what depends on it and still writes
the leaderboard of the rest."""
import json
import os
import re

import pytest
import torch

from _pipeline_helpers import run, write_pipeline
from _tool_helpers import FIXTURES, REPO, run_tool
from backbones import CheckpointError, create_model, load_checkpoint, save_checkpoint
from harness.experiment.cli import run_main
from harness.experiment.divergence import DivergenceHook, TrainingDiverged
from vitbench.results.table import build_table

DIVERGING = 'optim_wrapper = dict(optimizer=dict(lr=1e6))'  # SGD on the toy regression: inf by iteration 4
MESSAGE = (r'error: training diverged: the loss is (inf|nan) at iteration (\d+); the last finite loss was \S+ at '
           r'iteration (\d+)\. Nothing was exported; lower the learning rate or check the data')


@pytest.fixture(autouse=True)
def _toy_environment(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')


def toy_experiment(tmp_path, name, extra=''):
    """The toy task with an experiment dict (it writes result.json) and a backbone.pth export."""
    config = tmp_path / f'{name}.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_random_config.py')!r}]\n"
                      "experiment = dict(task='transfer', dataset='cifar10', backbone='vit_demo_patch8_64')\n"
                      f'{extra}\n')
    return str(config)


def test_a_non_finite_loss_stops_the_run_and_is_recorded_as_diverged(tmp_path):
    result = run_tool('tools/train.py', toy_experiment(tmp_path, 'diverging', DIVERGING), '--work-dir',
                      tmp_path / 'run')
    assert result.returncode == 3, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith('error:')]
    assert len(errors) == 1 and 'Traceback' not in result.stderr
    match = re.fullmatch(MESSAGE, errors[0])
    assert match, errors[0]
    iteration, last = int(match[2]), int(match[3])
    assert last == iteration - 1
    record = json.loads((tmp_path / 'run' / 'result.json').read_text())
    assert record['status'] == 'diverged' and record['metrics'] == {}
    assert record['diverged']['iteration'] == iteration and record['diverged']['last_finite_iteration'] == last
    assert not (tmp_path / 'run' / f'iter_{iteration}.pth').exists()  # no checkpoint of the broken weights

    # the leaderboard: the run fills no row (never a number, its cost in no row) and is listed in its own section
    ok = run_tool('tools/train.py', toy_experiment(tmp_path, 'fine'), '--work-dir', tmp_path / 'fine')
    assert ok.returncode == 0, ok.stderr[-2000:]
    table = build_table([str(tmp_path / 'run')])
    assert not table.rows and table.failed == [
        f"vit_demo_patch8_64 / scratch / 0 epochs, transfer on cifar10: diverged at iteration {iteration} (loss "
        f"{record['diverged']['loss']}; last finite {record['diverged']['last_finite_loss']:.4g} at {last}): "
        f"{tmp_path / 'run' / 'result.json'}"]
    board = run_tool('tools/leaderboard.py', tmp_path / 'run', tmp_path / 'fine', '--no-paper')
    assert board.returncode == 0, board.stderr
    assert '| diverged |' not in board.stdout and '## Failed and diverged runs (in no row)' in board.stdout
    assert '1 runs (result.json)' in board.stdout  # the finished one


def test_patience_allows_that_many_non_finite_losses_in_a_row():
    class Runner:  # what the hook reads of mmengine's; no experiment dict: nothing to record
        iter, cfg = 0, {}
    hook, runner = DivergenceHook(patience=2), Runner()
    for runner.iter, loss in enumerate([1.0, float('nan'), 0.5, float('inf')]):
        hook.after_train_iter(runner, 0, outputs=dict(loss=torch.tensor(loss)))  # never two in a row
    runner.iter = 4
    with pytest.raises(TrainingDiverged, match=r'the loss is nan at iteration 5 \(2 non-finite in a row\); the '
                                               r'last finite loss was 0\.5 at iteration 3'):
        hook.after_train_iter(runner, 0, outputs=dict(loss=torch.tensor(float('nan'))))
    with pytest.raises(ValueError, match='patience is 0'):
        DivergenceHook(patience=0)


def test_a_checkpoint_with_non_finite_weights_is_refused(tmp_path):
    model = create_model('vit_demo_patch8_64', num_classes=0)
    with torch.no_grad():
        model.blocks[1].mlp.fc1.weight[0, 0] = float('nan')
    path = save_checkpoint(str(tmp_path / 'backbone.pth'), model)
    with pytest.raises(CheckpointError, match=r'backbone\.pth: 1 of its tensors hold NaN or inf \(first: '
                                              r'blocks\.1\.mlp\.fc1\.weight\); the training that wrote it diverged'):
        load_checkpoint(create_model('vit_demo_patch8_64', num_classes=0), path)

    def loads():  # as a downstream run meets it: one message, exit status 2
        load_checkpoint(create_model('vit_demo_patch8_64', num_classes=0), path)
    with pytest.raises(SystemExit) as stop:
        run_main(loads)
    assert stop.value.code == 2


def test_the_pipeline_reports_a_diverged_stage_skips_its_dependents_and_tabulates_the_rest(tmp_path):
    path = write_pipeline(tmp_path, [
        dict(name='bad', config=toy_experiment(tmp_path, 'diverging', DIVERGING), per_backbone=False),
        dict(name='after', config=toy_experiment(tmp_path, 'fine'), per_backbone=False, depends_on=['bad']),
        dict(name='good', config=toy_experiment(tmp_path, 'fine'), per_backbone=False),
        dict(name='leaderboard', kind='leaderboard', depends_on=['bad', 'after', 'good'], paper=False)])
    runner, results, out = run(path)
    assert results['bad'].status == 'diverged' and results['bad'].detail.startswith('diverged at iteration')
    assert re.search(r'bad: DIVERGED after \S+: diverged at iteration \d+ \(loss (inf|nan)\)', out), out
    assert results['after'].status == 'blocked' and results['good'].status == 'ran'
    assert results['leaderboard'].status == 'ran', out
    board = (tmp_path / 'leaderboard.md').read_text()
    assert 'diverged' in board
    runner, results, out = run(path)  # diverged is not done: it runs (and diverges) again
    assert results['bad'].status == 'diverged' and results['good'].status == 'cached'
