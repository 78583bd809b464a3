"""harness/pipeline/preload.py: a train / test stage forked from the preloaded server keeps what a subprocess stage
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

from _pipeline_helpers import run, write_pipeline
from _tool_helpers import FIXTURES, REPO, wait_for
from harness.pipeline import preload
from harness.pipeline import command as pipeline_command
from harness.pipeline.run import stop_stages

# Stands in for tools/train.py (the tests point command.REPO to a folder with it): says whether it was forked from the
# preloaded server and what it was given, then does what its config's name says.
STAGE_SCRIPT = textwrap.dedent('''\
    import os, sys
    forked = 'harness.experiment.cli' in sys.modules  # imported by the server, not by this script
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
    assert results['raises'].detail == 'exit status 1: ValueError: broke on purpose'
    assert results['exits'].detail == 'exit status 3'
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
        from harness.pipeline import command, run
        from harness.pipeline.spec import load_pipeline
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


# Stands in for tools/train.py on a machine with GPUs: what the stage was given and whether CUDA state crossed a fork
# into it; the stages of a pipeline wait for each other to start, so that they run side by side.
GPU_STAGE_SCRIPT = textwrap.dedent('''\
    import glob, json, os, sys, time
    forked = 'harness.experiment.cli' in sys.modules
    import torch
    work_dir = sys.argv[sys.argv.index('--work-dir') + 1]
    os.makedirs(work_dir, exist_ok=True)
    seen = dict(forked=forked, bad_fork=torch._C._cuda_isInBadFork(), argv=sys.argv[1:],
                devices=os.environ.get('CUDA_VISIBLE_DEVICES'), rank=os.environ.get('RANK'),
                world=os.environ.get('WORLD_SIZE'))
    with open(os.path.join(work_dir, f'seen{os.environ.get("RANK", "")}.json'), 'w') as f:
        json.dump(seen, f)
    deadline = time.time() + 60
    while len(glob.glob(os.path.join(os.path.dirname(work_dir), '*', 'seen*.json'))) < int(os.environ['EXPECT']) \\
            and time.time() < deadline:
        time.sleep(0.05)
    if os.environ.get('RANK', '0') == '0':
        record = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64', backbone_overrides={},
                      pretrain=None, metrics={'loss': 1.0}, eval='ss', params_M=1.0, gflops=0.1, config='toy',
                      git_commit=None, created='2026-01-01T00:00:00+00:00')
        with open(os.path.join(work_dir, 'result.json'), 'w') as f:
            json.dump(record, f)
''')


def gpu_stages(tmp_path, monkeypatch, names):
    (tmp_path / 'tools').mkdir()
    (tmp_path / 'tools' / 'train.py').write_text(GPU_STAGE_SCRIPT)
    monkeypatch.setattr(pipeline_command, 'REPO', str(tmp_path))
    stages = []
    for name in names:
        config = tmp_path / f'{name}.py'
        config.write_text("experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
        stages.append(dict(name=name, config=str(config), per_backbone=False))
    (tmp_path / 'stages').mkdir()  # the stages' work dirs, apart from tools/ and the configs
    return write_pipeline(tmp_path / 'stages', stages)


def seen(tmp_path, name, rank=''):
    return json.loads((tmp_path / 'stages' / name / f'seen{rank}.json').read_text())


def test_where_there_are_gpus_no_stage_is_forked_and_each_runs_on_its_own_gpu(tmp_path, monkeypatch, forked):
    """The preload server asked CUDA for its devices (mmengine does at import: a stage forked from it is in torch's
    'bad fork' state, here as on a GPU machine), so CUDA state would cross the fork into every training: 'Cannot
    re-initialize CUDA in forked subprocess' on the first GPU machine. Where there are GPUs the stages start fresh,
    and two stages side by side on a 2-GPU machine get one GPU each."""
    path = gpu_stages(tmp_path, monkeypatch, ['first', 'second'])
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '0,1')  # what a 2-GPU machine shows (no GPU needed to start stages)
    monkeypatch.setenv('EXPECT', '2')
    _, results, out = run(path, jobs=2)
    assert [r.status for r in results.values()] == ['ran', 'ran'], out
    assert forked == []
    first, second = seen(tmp_path, 'first'), seen(tmp_path, 'second')
    assert not first['forked'] and not first['bad_fork'] and not second['bad_fork']
    assert {first['devices'], second['devices']} == {'0', '1'}
    assert 'first: on GPU 0' in out or 'first: on GPU 1' in out


def test_without_gpus_the_stages_are_forked_from_the_preload_server(tmp_path, monkeypatch, forked):
    """The other half: on a CPU machine the server saves each stage its imports; CUDA state there does no harm."""
    path = gpu_stages(tmp_path, monkeypatch, ['only'])
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '')
    monkeypatch.setenv('EXPECT', '1')
    _, results, out = run(path)
    assert results['only'].status == 'ran', out
    assert len(forked) == 1 and seen(tmp_path, 'only')['forked'] and seen(tmp_path, 'only')['devices'] == ''


def test_a_stage_of_several_gpus_runs_under_torchrun_one_process_per_gpu(tmp_path, monkeypatch, forked):
    path = gpu_stages(tmp_path, monkeypatch, ['wide'])
    monkeypatch.setenv('CUDA_VISIBLE_DEVICES', '0,1,2')
    monkeypatch.setenv('EXPECT', '2')
    runner, results, out = run(path, gpus_per_stage=2)
    assert results['wide'].status == 'ran', out
    ranks = [seen(tmp_path, 'wide', rank) for rank in (0, 1)]
    assert [(r['rank'], r['world'], r['devices']) for r in ranks] == [('0', '2', '0,1'), ('1', '2', '0,1')]
    assert ranks[0]['argv'][-2:] == ['--launcher', 'pytorch'] and not ranks[0]['forked']
    assert '-m torch.distributed.run --standalone --nproc_per_node=2 ' in '\n'.join(runner.plan())


def test_a_gpu_request_the_machine_cannot_meet_is_refused_in_one_line(tmp_path):
    from harness.pipeline.gpus import GpuError, GpuPool
    with pytest.raises(GpuError, match=r'--gpus-per-stage 4: this machine shows the pipeline 2 GPUs \(0,1\)'):
        GpuPool(['0', '1'], 4)
    pool = GpuPool(['0', '1'])  # the least used first, ties in order; a single GPU is shared
    assert [pool.take(), pool.take(), pool.take()] == [['0'], ['1'], ['0']]
    pool.give_back(['0'])
    pool.give_back(['0'])
    assert pool.take() == ['0'] and GpuPool([]).take() == []
    result = subprocess.run([sys.executable, 'tools/pipeline.py', 'configs/pipelines/demo.py', '--dry-run',
                             '--gpus-per-stage', '2'], cwd=REPO, capture_output=True, text=True,
                            env=dict(os.environ, CUDA_VISIBLE_DEVICES=''))
    assert result.returncode == 2 and result.stderr.strip() == (
        'error: --gpus-per-stage 2: this machine shows the pipeline 0 GPUs; ask for at most 1 (CUDA_VISIBLE_DEVICES '
        'chooses which it shows)')
