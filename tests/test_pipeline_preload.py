"""vitbench/pipeline/preload.py: a train / test stage forked from the preloaded server keeps what a subprocess stage
has: the same training (metrics to the last digit), a process group of its own that stop_stages stops, its exit
status and traceback, its environment, working directory and argv, and no life after a pipeline killed with -9."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from _tool_helpers import FIXTURES, REPO, wait_for
from test_pipeline import run, write_pipeline
from vitbench.pipeline import preload
from vitbench.pipeline import command as pipeline_command
from vitbench.pipeline.run import stop_stages

# Stands in for tools/train.py (the tests point command.REPO to a folder with it): says whether it was forked from the
# preloaded server and what it was given, then does what its config's name says.
STAGE_SCRIPT = textwrap.dedent('''\
    import os, sys
    forked = 'vitbench.experiment.cli' in sys.modules  # imported by the server, not by this script
    import torch
    config, work_dir = sys.argv[1], sys.argv[sys.argv.index('--work-dir') + 1]
    dataset = torch.utils.data.TensorDataset(torch.ones(8, 4) @ torch.ones(4, 4))
    loaded = sum(float(b[0].sum()) for b in torch.utils.data.DataLoader(dataset, batch_size=4, num_workers=1))
    print(f'forked={forked} name={__name__} cwd={os.getcwd()} threads={torch.get_num_threads()} '
          f'mark={os.environ.get("PRELOAD_TEST_MARK")} argv={sys.argv[2:4]} loaded={loaded:g}', flush=True)
    if config.endswith('raises.py'):
        raise ValueError('broke on purpose')
    if config.endswith('exits.py'):
        sys.exit(3)
    if config.endswith('sleeps.py'):
        with open(os.path.join(work_dir, 'started'), 'w') as f:
            f.write(f'{os.getpid()} {forked}')
        import time
        time.sleep(60)
''')


@pytest.fixture(autouse=True)
def _toy_environment(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')  # the server serves one thread setting: every test here has it
    monkeypatch.delenv('VITBENCH_NO_PRELOAD', raising=False)


@pytest.fixture
def forked(monkeypatch):
    """The argv of every stage forked from the server (the others ran as subprocesses)."""
    argvs = []

    class Recorded(preload.ForkedStage):
        def __init__(self, argv, env):
            argvs.append(argv)
            super().__init__(argv, env)

    monkeypatch.setattr(preload, 'ForkedStage', Recorded)
    return argvs


def alive(pid):
    """Whether ``pid`` runs (a zombie does not: it waits for a parent that is gone to reap it)."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            return f.read().rsplit(')', 1)[1].split()[0] != 'Z'
    except FileNotFoundError:
        return False


def script_stages(tmp_path, *names):
    """A pipeline of train stages that run STAGE_SCRIPT as their tools/train.py, one per config name."""
    (tmp_path / 'tools').mkdir()
    (tmp_path / 'tools' / 'train.py').write_text(STAGE_SCRIPT)
    stages = []
    for name in names:
        config = tmp_path / f'{name}.py'
        config.write_text("experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
        stages.append(dict(name=name, config=str(config), per_backbone=False))
    return write_pipeline(tmp_path, stages)


def test_a_forked_training_ends_as_the_same_training_in_a_subprocess(tmp_path, monkeypatch, forked):
    """The toy task with randomness everywhere (augmentation from random, numpy and torch in a dataloader worker,
    dropout, a noisy validation every 2 iterations): seeded, both runs validate to the same values."""
    records = {}
    for how in ('subprocess', 'forked'):
        monkeypatch.setenv('VITBENCH_NO_PRELOAD', '1' if how == 'subprocess' else '0')
        config = tmp_path / how / 'toy_experiment.py'
        config.parent.mkdir()
        config.write_text(f"_base_ = [{str(FIXTURES / 'toy_random_config.py')!r}]\n"
                          "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
        path = write_pipeline(config.parent, [dict(name='toy', config=str(config), per_backbone=False,
                                                   cfg_options={'train_dataloader.num_workers': 1})])
        _, results, out = run(path)
        assert results['toy'].status == 'ran', out
        assert len(forked) == (1 if how == 'forked' else 0)
        work_dir = config.parent / 'toy'
        assert 'Epoch(train) [1][8/8]' in (work_dir / 'pipeline.log').read_text()  # its output reached the log
        records[how] = (json.loads((work_dir / 'result.json').read_text())['metrics'],
                        (work_dir / 'metrics.jsonl').read_text())
    assert records['forked'] == records['subprocess']


def test_a_forked_stage_has_a_process_group_of_its_own_which_stop_stages_stops(tmp_path):
    (tmp_path / 'stage.py').write_text(textwrap.dedent('''\
        import signal, subprocess, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only SIGKILL, after the grace period, ends it
        worker = subprocess.Popen(['sleep', '60'])  # e.g. a dataloader worker: in the stage's group
        print(worker.pid, flush=True)
        time.sleep(60)
    '''))
    env = dict(os.environ)
    assert preload.start(env)
    stage = preload.ForkedStage([sys.executable, str(tmp_path / 'stage.py')], env)
    try:
        worker = int(stage.stdout.readline())
        assert os.getpgid(stage.pid) == os.getpgid(worker) == stage.pid != os.getpgrp()
        with pytest.raises(subprocess.TimeoutExpired):
            stage.wait(0.1)
        start = time.time()
        stop_stages([stage], grace=1.0)
        assert stage.wait(10) == -signal.SIGKILL and time.time() - start >= 1.0
        wait_for(lambda: not alive(worker), 10, 'the worker to end')  # the whole group was stopped
    finally:
        stop_stages([stage], grace=0)


def test_a_forked_stage_gets_its_environment_and_reports_its_failures(tmp_path, monkeypatch, forked):
    path = script_stages(tmp_path, 'raises', 'exits')
    monkeypatch.setattr(pipeline_command, 'REPO', str(tmp_path))
    assert preload.start(dict(os.environ))
    monkeypatch.setenv('PRELOAD_TEST_MARK', 'set after the server started')
    _, results, out = run(path)
    assert len(forked) == 2, out
    assert results['raises'].status == results['exits'].status == 'failed'
    assert results['raises'].detail == 'exit status 1' and results['exits'].detail == 'exit status 3'
    for name in ('raises', 'exits'):
        log = (tmp_path / name / 'pipeline.log').read_text()
        assert (f"forked=True name=__main__ cwd={REPO} threads=1 mark=set after the server started "
                f"argv=['--work-dir', '{tmp_path / name}'] loaded=128") in log
    log = (tmp_path / 'raises' / 'pipeline.log').read_text()
    assert 'Traceback (most recent call last):' in log and 'ValueError: broke on purpose' in log
    assert 'ValueError: broke on purpose' in out  # the end of the log, on the console


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='PR_SET_PDEATHSIG is Linux only')
def test_a_forked_stage_of_a_pipeline_killed_with_sigkill_dies(tmp_path):
    path = script_stages(tmp_path, 'sleeps')
    # with no `if __name__ == '__main__'`: the stage must not run the pipeline's script again (multiprocessing would)
    (tmp_path / 'driver.py').write_text(textwrap.dedent(f'''\
        from vitbench.pipeline import command, run
        from vitbench.pipeline.spec import load_pipeline
        command.REPO = {str(tmp_path)!r}
        run.PipelineRunner(load_pipeline({path!r})).run()
    '''))
    driver = subprocess.Popen([sys.executable, str(tmp_path / 'driver.py')], cwd=REPO, stdout=subprocess.DEVNULL)
    started = tmp_path / 'sleeps' / 'started'
    stage = None
    try:
        wait_for(lambda: (started.exists() and started.read_text()) or driver.poll() is not None, 60, 'the stage to start')
        assert driver.poll() is None, 'the pipeline ended before its stage started'
        pid, forked = started.read_text().split()
        stage = int(pid)
        assert forked == 'True'
        driver.kill()
        driver.wait()
        wait_for(lambda: not alive(stage), 10, 'the stage of the pipeline killed with SIGKILL to end')
    finally:
        driver.kill()
        if stage and alive(stage):
            os.kill(stage, signal.SIGKILL)
