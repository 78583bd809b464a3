"""The Slurm executor (harness/pipeline/slurm.py) against a real one-node Slurm (tests/_slurm_cluster.py): each
stage one job after its dependencies, the leaderboard at the end, a job requeued mid-training (by scontrol, then by
the signal Slurm sends before a time limit) resumes from its last checkpoint and ends exactly as the uninterrupted
run, stages already done are not submitted, a failed stage cancels its dependents; and the resources of a pipeline
config are checked in one line each."""
import csv
import json
import os
import subprocess
import sys

import pytest
import torch

from _pipeline_helpers import fake, write_pipeline
from _slurm_cluster import SlurmCluster, skip_reason
from _tool_helpers import FIXTURES, REPO, wait_for
from harness.pipeline.resources import time_minutes
from harness.pipeline.slurm import describe
from harness.pipeline.spec import PipelineError, load_pipeline


@pytest.fixture(autouse=True)
def _toy_environment(monkeypatch):
    monkeypatch.chdir(REPO)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')


@pytest.fixture(scope='module')
def cluster(tmp_path_factory):
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    with SlurmCluster(tmp_path_factory.mktemp('slurm')) as running:
        yield running


def pipeline_tool(cluster, path, *args, env=None, timeout=600):
    """tools/pipeline.py with the cluster's client environment (SLURM_CONF) and this test's variables."""
    env = dict(cluster.env, **{k: os.environ[k] for k in ('PYTHONPATH', 'OMP_NUM_THREADS')}, **(env or {}))
    return subprocess.run([sys.executable, 'tools/pipeline.py', path, *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=timeout)


def toy_pipeline(work):
    """A toy training (8 iterations, a checkpoint every 2), a stage after it, and the leaderboard of both."""
    work.mkdir(parents=True, exist_ok=True)
    config = work / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_random_config.py')!r}]\n"
                      "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
    return write_pipeline(work, [
        dict(name='toy', config=str(config), per_backbone=False, resources=dict(time='0:10:00')),
        fake('after', 'transfer', 1.0, depends_on=['toy']),
        dict(name='leaderboard', kind='leaderboard', depends_on=['toy', 'after'], paper=False, formats=['csv'],
             runs=['{root}/toy', '{root}/after'], resources=dict(time=5))],
        executor='slurm', slurm=dict(time=15, mem='1G'))


def job_of(work, stage):
    return json.loads((work / 'slurm_jobs.json').read_text())[stage]['job_id']


def leaderboard_rows(work):
    with open(work / 'leaderboard.csv') as f:
        rows = list(csv.DictReader(f))
    cost = ('device_hours', 'mem', 'per_s', 'wall')  # measured cost differs between runs; the results may not
    return [{k: v for k, v in row.items() if not any(c in k for c in cost)} for row in rows]


@pytest.mark.slow
def test_a_requeued_training_resumes_and_ends_as_the_uninterrupted_run(cluster, tmp_path):
    straight, requeued = tmp_path / 'straight', tmp_path / 'requeued'
    for work, env in ((straight, {}), (requeued, {'VITBENCH_FAULT_SLEEP': '2'})):  # 16 s: time to stop it twice
        submitted = pipeline_tool(cluster, toy_pipeline(work), env=env)
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert '[2/3] after: job ' in submitted.stdout and 'after ' + job_of(work, 'toy') in submitted.stdout
    job = job_of(requeued, 'toy')
    stage = requeued / 'toy'

    def requeued_again(restarts):  # pending until its old credentials expire (the cluster's cred_expire: 10 s)
        wait_for(lambda: cluster.job(job)['Restarts'] == str(restarts), 60, f'the job to be requeued ({restarts})')

    wait_for(lambda: (stage / 'iter_2.pth').exists(), 120, 'the first checkpoint of the training to requeue')
    assert not (stage / 'iter_8.pth').exists()
    cluster.run('scontrol', 'requeue', job)  # as a preemption does: the job is stopped and queued again
    requeued_again(1)
    # then the signal Slurm sends before the time limit (--signal=USR2@120): submitit asks the job where it stands
    # (SlurmStageJob.checkpoint) and requeues it itself
    wait_for(lambda: (stage / 'iter_4.pth').exists(), 120, 'the resumed training to save iteration 4')
    assert not (stage / 'iter_8.pth').exists()
    cluster.run('scancel', '--signal=USR2', job)
    requeued_again(2)

    for work in (straight, requeued):
        followed = pipeline_tool(cluster, str(work / 'pipeline.py'), '--wait', timeout=300)
        assert followed.returncode == 0, followed.stdout + followed.stderr + (work / 'toy' / 'pipeline.log').read_text()
    assert cluster.job(job)['Restarts'] == '2' and cluster.job(job)['JobState'] == 'COMPLETED'
    log = (stage / 'pipeline.log').read_text()
    assert log.count('tools/train.py') == 3 and log.count('--launcher slurm') == 3
    assert 'resumed epoch: 0, iter: 2' in log and 'resumed epoch: 0, iter: 4' in log
    job_log = (stage / 'slurm' / f'{job}_0_log.out').read_text() + (stage / 'slurm' / f'{job}_0_log.err').read_text()
    assert f'stage toy: job {job}, restart 1' in job_log and f'stage toy: job {job}, restart 2' in job_log
    assert 'Caught signal SIGUSR2' in job_log and f'Requeued job {job}' in job_log

    # the same training as the uninterrupted one, bit for bit, and the same leaderboard
    for name in ('params_rank0.pth',):
        expected, got = torch.load(straight / 'toy' / name), torch.load(stage / name)
        for key, value in expected.items():
            torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=f'{key} differs from the straight run')
    assert (stage / 'metrics.jsonl').read_text().splitlines()[-1] == \
        (straight / 'toy' / 'metrics.jsonl').read_text().splitlines()[-1]
    board = leaderboard_rows(requeued)
    assert board == leaderboard_rows(straight) and len(board) == 2
    # in dependency order: 'after' started once the training had written its result, the leaderboard after both
    assert (stage / 'result.json').stat().st_mtime_ns < (requeued / 'after' / 'ran').stat().st_mtime_ns
    assert (requeued / 'after' / 'result.json').stat().st_mtime_ns < (requeued / 'leaderboard.csv').stat().st_mtime_ns

    status = pipeline_tool(cluster, str(requeued / 'pipeline.py'), '--status')
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].split() == ['toy', 'done', 'job', job, '(requeued', '2x)']
    assert lines[1].strip() == f'log {stage / "pipeline.log"}; job output {stage / "slurm" / f"{job}_0_log.out"}, ' \
                               f'{stage / "slurm" / f"{job}_0_log.err"}'
    assert any(line.split()[:2] == ['leaderboard', 'COMPLETED'] for line in lines)

    again = pipeline_tool(cluster, str(requeued / 'pipeline.py'))  # done stages are not submitted again
    assert again.returncode == 0, again.stderr
    assert '[1/3] toy: done before, not submitted' in again.stdout
    assert '[2/3] after: done before, not submitted' in again.stdout
    assert '[3/3] leaderboard: job ' in again.stdout and ' after ' not in again.stdout.splitlines()[-2]


@pytest.mark.slow
def test_a_failed_stage_cancels_its_dependents_and_the_leaderboard_still_runs(cluster, tmp_path):
    path = write_pipeline(tmp_path, [
        fake('broken', 'fail'),
        fake('needs_broken', depends_on=['broken']),
        fake('fine', 'seg', 2.0),
        dict(name='leaderboard', kind='leaderboard', depends_on=['needs_broken', 'fine'], formats=['csv'],
             paper=False, runs=['{root}/fine'])], executor='slurm', slurm=dict(time=5))
    submitted = pipeline_tool(cluster, path, '--wait')
    assert submitted.returncode == 1, submitted.stdout + submitted.stderr
    states = {line.split()[0]: line.split()[1] for line in
              pipeline_tool(cluster, path, '--status').stdout.splitlines() if not line.startswith(' ')}
    assert states == dict(broken='FAILED', needs_broken='CANCELLED', fine='done', leaderboard='COMPLETED'), states
    assert not (tmp_path / 'needs_broken' / 'ran').exists() and (tmp_path / 'leaderboard.csv').exists()
    err = (tmp_path / 'broken' / 'slurm' / f'{job_of(tmp_path, "broken")}_0_log.err').read_text()
    assert 'stage broken failed: exit status 1' in err


# ---------------------------------------------------------------------------------------------- config checks

@pytest.mark.parametrize('text, minutes', [(90, 90), ('90', 90), ('1:30', 2), ('1:30:00', 90), ('2-00', 2880),
                                           ('3-00:00:00', 4320), ('0:00:01', 1)])
def test_time_limits_read_as_sbatch_reads_them(text, minutes):
    assert time_minutes(text) == minutes


@pytest.mark.parametrize('top, stage, message', [
    (dict(executor='cluster'), {}, "key 'executor' is 'cluster', expected one of ('local', 'slurm')"),
    (dict(slurm=dict(partiton='gpu')), {}, "key 'slurm': unknown key(s) ['partiton']; expected some of"),
    ({}, dict(resources=dict(nodes=0)), "stage 'a': key 'resources'['nodes'] is 0, expected a whole number >= 1"),
    ({}, dict(resources=dict(gpus_per_node=-1)), "['gpus_per_node'] is -1, expected a whole number >= 0"),
    ({}, dict(resources=dict(time='3 days')), "['time'] is '3 days', expected a time limit: minutes (e.g. 90), or"),
    ({}, dict(resources=dict(mem='64GB')), "['mem'] is '64GB', expected memory per node as sbatch --mem takes it"),
    ({}, dict(resources=dict(account='x')), "key 'resources': unknown key(s) ['account']; expected some of"),
    ({}, dict(resources=[8]), "key 'resources' is [8], expected a dict such as dict(nodes=1, gpus_per_node=8"),
])
def test_bad_resources_name_the_file_stage_and_key(tmp_path, top, stage, message):
    path = write_pipeline(tmp_path, [fake('a', **stage)], **top)
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert message in str(info.value) and str(info.value).startswith(path) and '\n' not in str(info.value)


@pytest.mark.parametrize('option, message', [
    (['--gpus-per-node', '-1'], '--gpus-per-node is -1, expected a whole number >= 0'),
    (['--time', '2 hours'], "--time is '2 hours', expected a time limit"),
    (['--mem', 'lots'], "--mem is 'lots', expected memory per node"),
])
def test_bad_resource_options_are_refused_in_one_line(tmp_path, option, message):
    path = write_pipeline(tmp_path, [fake('a')])
    done = subprocess.run([sys.executable, 'tools/pipeline.py', path, '--executor', 'slurm', '--dry-run', *option],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count('\n') == 1 and message in done.stderr, done.stderr


def test_stage_resources_replace_the_defaults_and_options_replace_the_config(tmp_path):
    path = write_pipeline(tmp_path, [fake('a'), fake('b', resources=dict(nodes=4, gpus_per_node=8, time='3-00:00:00'))],
                          slurm=dict(partition='gpu', gpus_per_node=8, time='24:00:00', mem='480G', account='vision'))
    pipeline = load_pipeline(path, executor='slurm', slurm=dict(partition='big'))
    assert pipeline.executor == 'slurm'
    assert describe(pipeline, pipeline.stage('a')) == \
        '1 node x 8 GPUs, 1-00:00:00, mem 480G, partition big, account vision'
    assert describe(pipeline, pipeline.stage('b')) == \
        '4 nodes x 8 GPUs, 3-00:00:00, mem 480G, partition big, account vision'
    assert load_pipeline(path).executor == 'local'  # the default


def test_paper_pipelines_declare_their_cluster_resources():
    """The GPUs the configs' batch sizes assume, as the official commands (deit README_revenge.md: the ViT-S / ViT-B
    pretraining on 1 node x 8 GPUs, here 400 epochs, half the 800 of the command; the full fine-tuning at 384 and
    Mask R-CNN on 16 GPUs)."""
    pipeline = load_pipeline('configs/pipelines/paper_deit3.py', executor='slurm')
    shown = {s.id.split('/')[-1]: describe(pipeline, s) for s in pipeline.stages}
    assert shown['pretrain'].startswith('1 node x 8 GPUs, 2-00:00:00')
    assert shown['ft384_full'].startswith('2 nodes x 8 GPUs') and shown['maskrcnn'].startswith('2 nodes x 8 GPUs')
    assert shown['leaderboard'].startswith('1 node (CPU)')
    for config in ('configs/pipelines/paper_deit3.py', 'configs/pipelines/paper_maelite.py'):
        pipeline = load_pipeline(config, executor='slurm')
        for stage in pipeline.stages:
            assert (' GPUs' in describe(pipeline, stage)) == (stage.kind in ('train', 'test')), stage.id
