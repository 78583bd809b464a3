"""Fault injection into tools/pipeline.py: a pipeline stopped mid-stage (SIGTERM) or killed (SIGKILL) leaves no
trainer behind and ``--resume`` finishes it with one result per stage; a work dir runs one pipeline at a time
(the second refuses in one line, a dead one's lock is taken over); a stage folder where a training still runs is
not started twice, and a second tools/train.py there refuses."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from _pipeline_helpers import DEMO, fake, run, write_pipeline
from _tool_helpers import CONFIG, FIXTURES, REPO, run_tool, wait_for
from harness.pipeline.record import is_done, key_metric
from harness.pipeline.spec import load_pipeline
from vitbench.fileio import RUN_LOCK, FolderLock

STAGE = 'toy'  # the training stage of toy_training_pipeline, in WORK_DIR/toy


@pytest.fixture(autouse=True)
def _toy_environment(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')


def toy_training_pipeline(tmp_path):
    """A training of the toy task (8 iterations, a checkpoint every 2), then a stage that depends on it."""
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_random_config.py')!r}]\n"
                      "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
    return write_pipeline(tmp_path, [dict(name=STAGE, config=str(config), per_backbone=False),
                                     fake('after', 'transfer', 1.0, depends_on=[STAGE])])


def trainers_in(work_dir):
    """The pids of live tools/train.py processes working in ``work_dir`` (from /proc). A stage forked from the preload
    server (harness.pipeline.preload) shows the server's command line instead: the run.lock checks catch it."""
    pids = []
    for entry in Path('/proc').iterdir():
        try:
            argv = (entry / 'cmdline').read_bytes().split(b'\0')
            state = (entry / 'stat').read_text().rsplit(')', 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # not a process, or gone meanwhile
        if state != 'Z' and any(a.endswith(b'tools/train.py') for a in argv) and str(work_dir).encode() in argv:
            pids.append(int(entry.name))
    return pids


def kill_all(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def pipeline_process(path, *args):
    return subprocess.Popen([sys.executable, 'tools/pipeline.py', path, *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
@pytest.mark.parametrize('stop', [signal.SIGTERM, signal.SIGKILL], ids=['SIGTERM', 'SIGKILL'])
def test_stopped_pipeline_leaves_no_trainer_and_resume_finishes_every_stage(stop, tmp_path, monkeypatch):
    path = toy_training_pipeline(tmp_path)
    stage_dir = tmp_path / STAGE
    monkeypatch.setenv('VITBENCH_FAULT_SLEEP', '1')  # 8 s of training: time to stop it midway
    pipeline = pipeline_process(path)
    try:
        wait_for(lambda: (stage_dir / 'iter_2.pth').exists() or pipeline.poll() is not None, what='iter_2.pth')
        assert pipeline.poll() is None, pipeline.communicate()
        pipeline.send_signal(stop)
        out, err = pipeline.communicate(timeout=60)
        assert pipeline.returncode == (130 if stop == signal.SIGTERM else -signal.SIGKILL), out + err
        # gone within 3 s, long before the 6 s of training it had left: stopped, not finished (its command line
        # leaves /proc as it starts to exit, its lock once it has closed its files)
        wait_for(lambda: not trainers_in(stage_dir) and not FolderLock(stage_dir, RUN_LOCK).holder(), timeout=3,
                 what=f'the trainer the pipeline left running ({signal.Signals(stop).name})')
    finally:
        pipeline.kill()
        kill_all(trainers_in(stage_dir))
    assert not (stage_dir / 'result.json').exists()
    monkeypatch.delenv('VITBENCH_FAULT_SLEEP')
    runner, results, out = run(path, resume=True)
    assert {k: r.status for k, r in results.items()} == {STAGE: 'ran', 'after': 'ran'}, out
    assert f'{STAGE}: running (resuming)' in out and 'resumed epoch' in (stage_dir / 'pipeline.log').read_text()
    assert [p.parent.name for p in sorted(tmp_path.glob('*/result.json'))] == ['after', STAGE]


WAIT_FOR_RELEASE = textwrap.dedent('''\
    import os, sys, time
    started, release = sys.argv[1], sys.argv[2]
    open(started, 'w').close()
    deadline = time.time() + 60
    while not os.path.exists(release) and time.time() < deadline:
        time.sleep(0.05)
''')


def test_a_second_pipeline_on_a_work_dir_in_use_refuses_in_one_line(tmp_path):
    (tmp_path / 'wait.py').write_text(WAIT_FOR_RELEASE)
    path = write_pipeline(tmp_path, [dict(name='wait', kind='command',
                                          argv=['{root}/wait.py', '{root}/started', '{root}/release'])])
    first = {}
    holder = threading.Thread(target=lambda: first.update(zip(('runner', 'results', 'out'), run(path))))
    holder.start()
    try:
        wait_for(lambda: (tmp_path / 'started').exists(), what='the first pipeline')
        second = pipeline_process(path)
        out, err = second.communicate(timeout=120)
    finally:
        (tmp_path / 'release').touch()
        holder.join(60)
    assert second.returncode == 2, out + err
    assert err.count('\n') == 1 and f'pid {os.getpid()} on ' in err and 'another pipeline' in err, err
    assert first['results']['wait'].status == 'ran' and out == ''  # the second ran nothing


def test_a_dead_pipelines_lock_is_taken_over_with_a_message(tmp_path):
    dead = subprocess.Popen(['true'])
    dead.wait()
    (tmp_path / 'pipeline.lock').write_text(f'pid {dead.pid} on {os.uname().nodename} since 2026-01-01 00:00:00\n')
    path = write_pipeline(tmp_path, [fake('a')])
    runner, results, out = run(path)
    assert results['a'].status == 'ran'
    assert f'took over the lock of pid {dead.pid} on ' in out and 'no longer running' in out
    assert (tmp_path / 'pipeline.lock').read_text() == ''  # released at the end


@pytest.mark.slow
def test_a_stage_where_a_training_still_runs_is_not_started_twice(tmp_path, monkeypatch):
    path = toy_training_pipeline(tmp_path)
    stage_dir = tmp_path / STAGE
    monkeypatch.setenv('VITBENCH_FAULT_SLEEP', '30')  # outlives what follows
    orphan = subprocess.Popen([sys.executable, 'tools/train.py', str(tmp_path / 'toy_experiment.py'),
                               '--work-dir', str(stage_dir)], cwd=REPO, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)  # as an older pipeline killed before this fix left it
    try:
        wait_for(lambda: FolderLock(stage_dir, RUN_LOCK).holder(), what='the training to hold its work dir')
        second = run_tool('tools/train.py', CONFIG, '--work-dir', stage_dir, '--resume')
        assert second.returncode == 2, second.stdout[-2000:] + second.stderr
        assert f'another training runs here: {stage_dir} is in use by pid {orphan.pid} on ' in second.stderr
        runner, results, out = run(path, resume=True)
        assert results[STAGE].status == 'failed' and results['after'].status == 'blocked'
        assert f'pid {orphan.pid}' in results[STAGE].detail and 'not started twice' in results[STAGE].detail
        assert trainers_in(stage_dir) == [orphan.pid]
    finally:
        orphan.kill()
        orphan.wait()


def test_a_stage_takes_only_its_own_run_s_record(tmp_path):
    """Issue 46.1: a test's record in a training stage's folder (tools/test.py of another checkpoint there) was
    taken as the training's result ('done, skipped', top-1 5.2 for 26.0). A train stage takes a training's record
    only, a test stage the evaluation of the checkpoint it names only."""
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='toy', backbone={DEMO!r})\n")
    pipeline = load_pipeline(write_pipeline(tmp_path, [
        dict(name='seg', config=str(config)),
        dict(name='ms', kind='test', config=str(config), depends_on=['seg'], weights='{seg.last_checkpoint}'),
    ], backbones=[DEMO]))
    seg, ms = (pipeline.stage(f'{DEMO}/{name}') for name in ('seg', 'ms'))

    def write(folder, value, **run):
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, 'result.json').write_text(json.dumps(dict(task='seg', metrics=dict(mIoU=value), run=run)))

    write(seg.work_dir, 5.2, kind='evaluation', id='e', checkpoint=dict(path=str(tmp_path / 'other.pth')))
    assert not is_done(pipeline, seg) and key_metric(pipeline, seg) == ''
    write(seg.work_dir, 26.0, kind='training', id='t')
    assert is_done(pipeline, seg) and key_metric(pipeline, seg) == 'mIoU 26.00'
    # the test stage: the evaluation of the training's last checkpoint (named relative to its folder), no other
    Path(seg.work_dir, 'epoch_2.pth').write_bytes(b'weights')
    Path(seg.work_dir, 'last_checkpoint').write_text('epoch_2.pth')
    evaluations = Path(ms.work_dir, 'eval', 'epoch_2')
    write(evaluations, 5.2, kind='evaluation', id='e', checkpoint=dict(path=str(tmp_path / 'epoch_2.pth')))
    assert not is_done(pipeline, ms)
    write(evaluations, 27.5, kind='evaluation', id='e', checkpoint=dict(path=str(Path(seg.work_dir, 'epoch_2.pth'))))
    assert is_done(pipeline, ms) and key_metric(pipeline, ms) == 'mIoU 27.50'
