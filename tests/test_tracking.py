"""Experiment tracking (issue 33): ``tools/train.py --vis-backend tensorboard|wandb|mlflow`` adds mmengine's own
backends beside the config's LocalVisBackend. One short demo training logs to all three; each tracker's log, read
back with that tool's own reader, holds exactly the scalars mmengine wrote to scalars.json. A tracker whose package
is missing is one line naming the extra to install; tools/pipeline.py passes the option on to its train stages."""
import glob
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from mmengine.config import Config

from harness import demo_data
from harness.experiment.tracking import add_trackers
from harness.pipeline.command import command_of
from harness.pipeline.record import fingerprint
from harness.pipeline.spec import load_pipeline

REPO = Path(__file__).resolve().parents[1]
# the trackers' own settings left to their defaults (W&B offline, MLflow's file store), their files kept in the test's
_TRACKER_VARIABLES = ('WANDB_MODE', 'WANDB_PROJECT', 'WANDB_NAME', 'WANDB_API_KEY', 'MLFLOW_TRACKING_URI',
                      'MLFLOW_EXPERIMENT_NAME')


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _TRACKER_VARIABLES}
    env.update(OMP_NUM_THREADS='1', WANDB_SILENT='true', WANDB_ERROR_REPORTING='false',
               WANDB_CONFIG_DIR=str(tmp / 'wandb_config'), WANDB_CACHE_DIR=str(tmp / 'wandb_cache'),
               WANDB_DATA_DIR=str(tmp / 'wandb_data'))
    return env


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    """The supervised demo recipe on 16 tiny demo images: 2 epochs of 2 iterations, a validation after each, every
    iteration logged, to the three trackers at once. Run from a folder of its own, which holds the demo data where
    the config looks for it (data/demo); the config is found among the checkout's."""
    tmp = tmp_path_factory.mktemp('tracking')
    datasets = demo_data.select(['imagenet', 'imagenet_v2', 'imagenet_real'])  # what sup_demo.py evaluates on
    assert demo_data.generate(datasets, str(tmp / 'data' / 'demo'), scale='tiny', log=lambda m: None) == []
    work_dir = tmp / 'work'
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader')
               for key in ('num_workers=0', 'persistent_workers=False', 'batch_size=8')]
    options += ['train_dataloader.dataset.indices=16', 'val_dataloader.dataset.indices=8', 'train_cfg.max_epochs=2',
                'train_cfg.val_interval=1', 'default_hooks.logger.interval=1', 'default_hooks.checkpoint.interval=2']
    result = subprocess.run(
        [sys.executable, str(REPO / 'tools' / 'train.py'), 'configs/demo/sup_demo.py', '--work-dir', str(work_dir),
         '--vis-backend', 'tensorboard', '--vis-backend', 'wandb', '--vis-backend', 'mlflow', '--vis-backend', 'wandb',
         '--cfg-options', *options], cwd=tmp, env=_env(tmp), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    (vis_data,) = work_dir.glob('*/vis_data')
    rows = [json.loads(line) for line in (vis_data / 'scalars.json').read_text().splitlines()]
    # what the run must have logged for the comparisons to mean something: training and validation scalars
    assert {'loss', 'lr'} <= rows[0].keys() and {'accuracy/top1', 'accuracy/top1_v2'} <= rows[-1].keys()
    assert len(rows) == 6
    return dict(tmp=tmp, work_dir=work_dir, vis_data=vis_data, rows=rows)


def _logged(rows, value=float):
    """scalars.json as (name, step, value) with their multiplicity: training and validation share some names and
    steps (time, data_time at step 1)."""
    return Counter((name, row['step'], value(v)) for row in rows for name, v in row.items() if name != 'step')


def test_tensorboard_event_file_holds_the_scalars(run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    # all events, in the order written: validation's step 1 after training's step 2 is no restart to purge
    events = EventAccumulator(str(run['vis_data']), size_guidance={'scalars': 0}, purge_orphaned_data=False)
    events.Reload()
    read = Counter((tag, e.step, e.value) for tag in events.Tags()['scalars'] for e in events.Scalars(tag))
    assert read == _logged(run['rows'], lambda v: float(np.float32(v)))  # TensorBoard stores float32


def test_mlflow_file_store_holds_the_scalars(run, monkeypatch):
    from mlflow.tracking import MlflowClient
    monkeypatch.setenv('MLFLOW_ALLOW_FILE_STORE', 'true')  # MLflow 3 reads its file store only when asked to
    client = MlflowClient(tracking_uri=run['vis_data'].as_uri())
    (mlflow_run,) = client.search_runs([client.get_experiment_by_name('vitbench').experiment_id])
    assert mlflow_run.data.tags['mlflow.runName'] == str(run['work_dir'])
    names = {name for row in run['rows'] for name in row} - {'step'}
    read = Counter((m.key, m.step, m.value) for name in names
                   for m in client.get_metric_history(mlflow_run.info.run_id, name))
    assert read == _logged(run['rows'])


def test_wandb_offline_run_holds_the_scalars(run):
    """Offline by default, one run although --vis-backend wandb was given twice, read by wandb's own reader of its
    transaction log (`wandb leet inspect`): one history row per logging, in order."""
    (run_dir,) = glob.glob(str(run['vis_data'] / 'wandb' / 'offline-run-*'))
    inspect = subprocess.run([sys.executable, '-m', 'wandb', 'leet', 'inspect', '--json', run_dir],
                             env=dict(_env(run['tmp']), WANDB_MODE='offline'), capture_output=True, text=True,
                             timeout=120)
    assert inspect.returncode == 0, inspect.stderr[-2000:]
    records = [json.loads(line) for line in inspect.stdout.splitlines()]
    (header,) = [r['run'] for r in records if r['type'] == 'run']
    assert header['display_name'] == str(run['work_dir']) and header['project'] == 'vitbench'
    assert header['telemetry']['feature']['offline']
    history = [{k: v for k, v in r['history']['item'].items() if not k.startswith('_')}
               for r in records if r['type'] == 'history']
    assert history == [{k: v for k, v in row.items() if k != 'step'} for row in run['rows']]


def _without(module: str, tool: str, *args, tmp: Path):
    """A tool run as if ``module`` were not installed (None in sys.modules: Python's own way to make an import fail)."""
    code = (f'import runpy, sys; sys.modules[{module!r}] = None; sys.argv = {[tool, *args]!r}; '
            f'runpy.run_path({tool!r}, run_name="__main__")')
    return subprocess.run([sys.executable, '-c', code], cwd=REPO, env=_env(tmp), capture_output=True, text=True,
                          timeout=300)


def test_a_missing_tracker_is_one_line_naming_its_extra(tmp_path):
    result = _without('wandb', 'tools/train.py', 'configs/demo/sup_demo.py', '--work-dir', str(tmp_path / 'w'),
                      '--vis-backend', 'tensorboard', '--vis-backend', 'wandb', tmp=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: --vis-backend wandb: the package 'wandb' is not installed; install it "
                                     "with pip install 'vitbench[wandb]' (all three trackers: 'vitbench[tracking]')")
    assert not (tmp_path / 'w').exists()  # said before anything ran
    # the pipeline says it before its first stage
    result = _without('mlflow', 'tools/pipeline.py', 'configs/pipelines/demo.py', '--work-dir', str(tmp_path / 'p'),
                      '--vis-backend', 'mlflow', tmp=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: --vis-backend mlflow: the package 'mlflow' is not installed; install it "
                                     "with pip install 'vitbench[mlflow]' (all three trackers: 'vitbench[tracking]')")
    assert not (tmp_path / 'p').exists()


def test_trackers_join_the_config_visualizer(tmp_path):
    """Beside the config's own backends (a tracker it lists already is not doubled), and with the LocalVisBackend
    written out for a config without a visualizer."""
    cfg = Config(dict(work_dir=str(tmp_path), visualizer=dict(
        type='Visualizer', vis_backends=[dict(type='LocalVisBackend'), dict(type='TensorboardVisBackend')])))
    assert add_trackers(cfg, ['tensorboard', 'mlflow']) == []
    assert [b['type'] for b in cfg.visualizer.vis_backends] == [
        'LocalVisBackend', 'TensorboardVisBackend', 'MLflowVisBackend']
    cfg = Config(dict(work_dir=str(tmp_path)))
    assert add_trackers(cfg, ['wandb']) == []
    assert cfg.visualizer.type == 'Visualizer'
    assert [b['type'] for b in cfg.visualizer.vis_backends] == ['LocalVisBackend', 'WandbVisBackend']
    assert cfg.visualizer.vis_backends[1]['init_kwargs']['mode'] == 'offline'


def test_the_pipeline_passes_trackers_to_its_train_stages(tmp_path, monkeypatch):
    """On the command line of every train stage (given twice, once), of no other stage; and no stage's recipe
    changes: a finished stage is not run again for logging to one more tracker."""
    monkeypatch.chdir(REPO)  # the pipeline config names configs/... from the repository root
    pipeline = load_pipeline('configs/pipelines/demo.py', work_dir=str(tmp_path))
    kinds = Counter(stage.kind for stage in pipeline.stages)
    result = subprocess.run([sys.executable, 'tools/pipeline.py', 'configs/pipelines/demo.py', '--dry-run',
                             '--work-dir', str(tmp_path), '--vis-backend', 'tensorboard', '--vis-backend', 'wandb',
                             '--vis-backend', 'tensorboard'], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    commands = [line for line in result.stdout.splitlines() if line.startswith('    ') and '.py ' in line]
    train = [line for line in commands if 'tools/train.py' in line]
    assert kinds['train'] > 1 and len(train) == kinds['train'] and len(commands) == kinds['train'] + kinds['command']
    for line in commands:
        expected = 1 if line in train else 0
        assert line.count('--vis-backend tensorboard') == expected and line.count('--vis-backend wandb') == expected

    before = {stage.id: fingerprint(pipeline, stage) for stage in pipeline.stages if stage.kind == 'train'}
    pipeline.vis_backends = ['mlflow']
    assert {stage.id: fingerprint(pipeline, stage) for stage in pipeline.stages if stage.kind == 'train'} == before
    for stage in pipeline.stages:
        if stage.kind == 'train':
            argv = command_of(pipeline, stage)
            assert argv[argv.index('--vis-backend') + 1] == 'mlflow' and argv.count('--vis-backend') == 1
