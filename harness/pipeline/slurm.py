"""The Slurm executor: every stage of a :class:`~harness.pipeline.Pipeline` one Slurm job, submitted through
submitit, as ``facebookresearch/deit``'s and ``/mae``'s ``run_with_submitit.py`` submit theirs.

* **One job per stage, in dependency order.** A stage's job depends ``afterok`` on the jobs of the stages it
  depends on (``afterany`` for a leaderboard: it tabulates what finished) and is cancelled when one of them
  fails (``--kill-on-invalid-dep=yes``). A stage already done (``result.json``, see :func:`~.record.is_done`) is not
  submitted, and its dependents do not wait for it; a stage whose job is still pending or running from an
  earlier submission is not submitted twice: its dependents wait for that job. Submitting again after a failure
  resubmits what did not finish.
* **Launch.** A train / test job runs one task per GPU on each of its nodes (one task without GPUs), each task
  ``tools/train.py ... --launcher slurm`` (mmengine's Slurm launcher reads ``SLURM_PROCID`` / ``SLURM_NTASKS`` /
  ``SLURM_NODELIST``; ``MASTER_PORT`` comes from the job id, so jobs sharing a node do not collide). Task 0 runs the
  stage as the local executor does (:meth:`~.run.PipelineRunner.run_stage`: its log ``STAGE/pipeline.log``, the
  run lock, the checks that it wrote its result); a command or leaderboard stage is one task.
* **Preemption and time limits.** Jobs are requeueable. A requeued job (``scontrol requeue``, preemption with
  ``PreemptMode=REQUEUE``, or submitit's own requeue when Slurm signals ``USR2`` before the time limit: at most
  ``max_requeues`` time-outs) starts again with ``SLURM_RESTART_COUNT`` > 0 and resumes its training from the last
  checkpoint (``--resume``), as ``tools/pipeline.py --resume`` would.
* **Where things are.** ``WORK_DIR/slurm_jobs.json`` records each stage's job id and logs; submitit's files and
  the job's stdout / stderr are in ``STAGE_WORK_DIR/slurm/`` (``JOBID_0_log.out``, ``JOBID_0_log.err``).
  :func:`status_lines` (``tools/pipeline.py --status``) asks Slurm for each job's state.
"""
import json
import os
import os.path as osp
import subprocess
import sys
import time
from typing import Dict, List, Optional, TextIO

from harness.tasks import load_tasks
from vitbench.fileio import FolderInUse, FolderLock, atomic_write_text

from .resources import format_minutes, stage_resources
from .command import command_of
from .record import is_done
from .run import LOCK_NAME, PipelineRunner
from .spec import Pipeline, PipelineError, Stage

JOBS_NAME = 'slurm_jobs.json'
LIVE_STATES = ('PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING', 'REQUEUED', 'REQUEUE_FED', 'REQUEUE_HOLD',
               'RESIZING', 'SUSPENDED', 'STOPPED', 'SIGNALING', 'STAGE_OUT', 'RESV_DEL_HOLD')
MAX_REQUEUES = 20  # time-outs submitit requeues a job for (preemptions do not count): 20 x a 3-day limit
SIGNAL_DELAY_S = 120  # USR2 this long before the time limit: time to requeue


class SlurmStageJob:
    """What a stage's job runs (pickled by submitit, called in every task of the job)."""

    def __init__(self, pipeline: Pipeline, stage_id: str, resume: bool):
        self.pipeline, self.stage_id, self.resume = pipeline, stage_id, resume

    def __call__(self) -> str:
        load_tasks(self.pipeline.imports)  # a fresh process: the records its summary and a leaderboard stage read
        stage = self.pipeline.stage(self.stage_id)
        job = os.environ.get('SLURM_JOB_ID', '0')
        restarts = int(os.environ.get('SLURM_RESTART_COUNT') or 0)
        resume = self.resume or restarts > 0  # requeued: continue from the last checkpoint
        os.environ.setdefault('MASTER_PORT', str(20000 + int(job) % 20000))
        if os.environ.get('SLURM_CPUS_PER_TASK'):
            os.environ.setdefault('OMP_NUM_THREADS', os.environ['SLURM_CPUS_PER_TASK'])
        launcher = 'slurm' if stage.kind in ('train', 'test') else None
        if int(os.environ.get('SLURM_PROCID') or 0) != 0:  # another rank of a distributed train / test
            return self._other_rank(command_of(self.pipeline, stage, resume, launcher))
        print(f'stage {stage.id}: job {job}' + (f', restart {restarts}' if restarts else ''), flush=True)
        runner = PipelineRunner(self.pipeline, resume=resume, launcher=launcher, heartbeat=30.0, jobs=1)
        result = runner.run_stage(stage, f'[job {job}]')
        if result.status not in ('ran', 'cached'):  # the job fails: the stages after it are cancelled
            raise RuntimeError(f'stage {stage.id} {result.status}: {result.detail} (log {result.log})')
        return result.metric

    @staticmethod
    def _other_rank(argv: List[str]) -> str:
        process = subprocess.Popen(argv)
        try:
            returncode = process.wait()
        except BaseException:
            process.terminate()
            raise
        if returncode != 0:
            raise RuntimeError(f'exit status {returncode}: {subprocess.list2cmdline(argv)}')
        return ''

    def checkpoint(self):
        """Called by submitit on USR2 (time limit near, or preemption): run again, requeued, where it stands."""
        import submitit
        return submitit.helpers.DelayedSubmission(SlurmStageJob(self.pipeline, self.stage_id, True))


# ---------------------------------------------------------------------------------------------- submitting

def _jobs_path(pipeline: Pipeline) -> str:
    return osp.join(pipeline.work_dir, JOBS_NAME)


def read_jobs(pipeline: Pipeline) -> Dict[str, dict]:
    """{stage id: {'job_id', 'folder', 'stdout', 'stderr', 'submitted'}} of the latest submission of each stage."""
    try:
        with open(_jobs_path(pipeline)) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise PipelineError(f'{_jobs_path(pipeline)} cannot be read ({e}); delete it to start the record anew')


def _slurm(*argv: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise PipelineError(f'{argv[0]} not found: the Slurm executor needs the Slurm client commands '
                            '(sbatch, squeue, scontrol) on this machine') from None


def job_info(job_id: str) -> Dict[str, str]:
    """``scontrol show job`` as a dict (JobState, Reason, Restarts, NodeList, RunTime, ...), {} when Slurm no
    longer knows the job; then ``sacct``, where accounting is kept, for its final state."""
    shown = _slurm('scontrol', 'show', 'job', '-o', str(job_id))
    if shown.returncode == 0 and shown.stdout.strip():
        return dict(item.split('=', 1) for item in shown.stdout.split() if '=' in item)
    accounted = _slurm('sacct', '-n', '-P', '-X', '-j', str(job_id), '-o', 'State,ExitCode')
    lines = accounted.stdout.split() if accounted.returncode == 0 else []
    if lines:
        state, code = lines[0].split('|')
        return dict(JobState=state.split()[0], ExitCode=code)
    return {}


def _resources_of(pipeline: Pipeline, stage: Stage) -> dict:
    return stage_resources(pipeline.slurm, stage.spec.get('resources'))


def _executor(pipeline: Pipeline, stage: Stage, dependency: Optional[str]):
    import submitit
    res = _resources_of(pipeline, stage)
    tasks = max(1, res['gpus_per_node']) if stage.kind in ('train', 'test') else 1
    executor = submitit.SlurmExecutor(folder=osp.join(stage.work_dir, 'slurm'), max_num_timeout=MAX_REQUEUES)
    extra = {'requeue': True}
    if dependency:
        extra.update({'dependency': dependency, 'kill-on-invalid-dep': 'yes'})
    params = dict(job_name=f'vitbench:{stage.id}', nodes=res['nodes'], ntasks_per_node=tasks, time=res['time'],
                  signal_delay_s=SIGNAL_DELAY_S, additional_parameters=extra)
    if res['gpus_per_node']:
        params['gpus_per_node'] = res['gpus_per_node']
    for key in ('cpus_per_task', 'mem', 'partition', 'account', 'qos', 'constraint'):
        if res.get(key) is not None:
            params[key] = res[key]
    executor.update_parameters(**params)
    return executor


def describe(pipeline: Pipeline, stage: Stage) -> str:
    """'2 nodes x 8 GPUs, 3-00:00:00, mem 480G, partition learnfair' (what the stage's job asks for)."""
    res = _resources_of(pipeline, stage)
    gpus = f' x {res["gpus_per_node"]} GPUs' if res['gpus_per_node'] else ' (CPU)'
    text = f'{res["nodes"]} node{"s" if res["nodes"] > 1 else ""}{gpus}, {format_minutes(res["time"])}'
    for key in ('cpus_per_task', 'mem', 'partition', 'account', 'qos', 'constraint'):
        if res.get(key) is not None:
            text += f', {key} {res[key]}'
    return text


def submit(pipeline: Pipeline, resume: bool = False, out: TextIO = None) -> Dict[str, str]:
    """Submit every stage not done and not queued yet; returns {stage id: job id} of the stages left to run."""
    out = out or sys.stdout
    lock = FolderLock(pipeline.work_dir, LOCK_NAME)
    try:
        lock.acquire()
    except FolderInUse as e:
        raise PipelineError(f'{e}: another pipeline runs or submits there; wait for it to end, or stop it') from None
    try:
        return _submit(pipeline, resume, out)
    finally:
        lock.release()


def _submit(pipeline: Pipeline, resume: bool, out: TextIO) -> Dict[str, str]:
    record, queued = read_jobs(pipeline), {}
    print(f'pipeline {pipeline.path}: {len(pipeline.stages)} stages on Slurm, work dir {pipeline.work_dir}', file=out)
    for why in pipeline.left_out:
        print(why, file=out)
    for i, stage in enumerate(pipeline.stages, 1):
        counter = f'[{i}/{len(pipeline.stages)}] {stage.id}:'
        if is_done(pipeline, stage):
            print(f'{counter} done before, not submitted', file=out)
            continue
        earlier = record.get(stage.id)
        if earlier and job_info(earlier['job_id']).get('JobState') in LIVE_STATES:
            queued[stage.id] = earlier['job_id']
            print(f'{counter} already queued as job {earlier["job_id"]}', file=out)
            continue
        waits = [queued[d] for d in stage.deps if d in queued]
        kind = 'afterany' if stage.kind == 'leaderboard' else 'afterok'
        executor = _executor(pipeline, stage, f'{kind}:{":".join(waits)}' if waits else None)
        try:
            job = executor.submit(SlurmStageJob(pipeline, stage.id, resume))
        except Exception as e:  # sbatch refused: a partition that does not exist, a time over its limit, ...
            message = str(e).strip().splitlines()
            raise PipelineError(f'stage {stage.id}: sbatch refused the job ({describe(pipeline, stage)}): '
                                f'{message[-1] if message else type(e).__name__}') from None
        queued[stage.id] = job.job_id
        record[stage.id] = dict(job_id=job.job_id, folder=str(job.paths.folder), stdout=str(job.paths.stdout),
                                stderr=str(job.paths.stderr), submitted=time.strftime('%Y-%m-%d %H:%M:%S'))
        atomic_write_text(json.dumps(record, indent=2), _jobs_path(pipeline))  # after each: true if sbatch fails
        after = f' after {", ".join(waits)}' if waits else ''
        print(f'{counter} job {job.job_id} ({describe(pipeline, stage)}){after}', file=out)
    print(f'{len(queued)} jobs queued; follow them with: tools/pipeline.py {pipeline.path} --status', file=out)
    return queued


# ---------------------------------------------------------------------------------------------- following

def stage_states(pipeline: Pipeline) -> List[dict]:
    """Each stage's state: ``done`` (its result is on disk), Slurm's state of its latest job (PENDING, RUNNING,
    COMPLETED, FAILED, CANCELLED, TIMEOUT, ...), ``not submitted``; with the job id, restarts and logs."""
    record, rows = read_jobs(pipeline), []
    for stage in pipeline.stages:
        job = record.get(stage.id) or {}
        info = job_info(job['job_id']) if job else {}
        state = info.get('JobState') or ('ended' if job else 'not submitted')
        if state == 'ended':  # Slurm forgot it: submitit's result file says how it ended
            state = _state_from_result(job)
        if is_done(pipeline, stage) and state not in LIVE_STATES:
            state = 'done'
        reason = info.get('Reason', 'None')
        rows.append(dict(id=stage.id, state=state, job_id=job.get('job_id'), reason='' if reason == 'None' else reason,
                         restarts=int(info.get('Restarts') or 0), stdout=job.get('stdout'), stderr=job.get('stderr'),
                         log=osp.join(stage.work_dir, 'pipeline.log')))
    return rows


def _state_from_result(job: dict) -> str:
    folder = job.get('folder', '')
    path = osp.join(folder, f'{job["job_id"]}_0_result.pkl')
    if not osp.isfile(path):
        return 'ended'
    import pickle
    try:
        with open(path, 'rb') as f:
            outcome = pickle.load(f)[0]
    except Exception:  # written by another Python, or truncated
        return 'ended'
    return 'COMPLETED' if outcome == 'success' else 'FAILED'


def status_lines(pipeline: Pipeline) -> List[str]:
    rows = stage_states(pipeline)
    if not any(r['job_id'] for r in rows):
        return [f'no Slurm jobs recorded in {_jobs_path(pipeline)}'] + [f'{r["id"]}: {r["state"]}' for r in rows]
    width = max(len(r['id']) for r in rows)
    lines = []
    for r in rows:
        job = f'job {r["job_id"]}' if r['job_id'] else ''
        extra = ', '.join(filter(None, [r['reason'], f'requeued {r["restarts"]}x' if r['restarts'] else '']))
        lines.append(f'{r["id"]:{width}}  {r["state"]:13} {job}' + (f' ({extra})' if extra else ''))
        if r['job_id'] and r['state'] != 'PENDING':
            log = f'log {r["log"]}; ' if osp.isfile(r['log']) else ''
            lines.append(f'{"":{width}}  {log}job output {r["stdout"]}, {r["stderr"]}')
    return lines


def wait(pipeline: Pipeline, out: TextIO = None, poll: float = 10.0, timeout: Optional[float] = None) -> bool:
    """Follow the recorded jobs until none is pending or running, printing each change of state; True when every
    stage is done or its job completed."""
    out = out or sys.stdout
    seen: Dict[str, str] = {}
    deadline = None if timeout is None else time.time() + timeout
    while True:
        rows = stage_states(pipeline)
        for r in rows:
            shown = r['state'] + (f' ({r["reason"]})' if r['reason'] and r['state'] == 'PENDING' else '')
            if r['job_id'] and seen.get(r['id']) != shown:
                print(f'{time.strftime("%H:%M:%S")} {r["id"]}: {shown} (job {r["job_id"]})', file=out, flush=True)
                seen[r['id']] = shown
        if not any(r['state'] in LIVE_STATES for r in rows):
            return all(r['state'] in ('done', 'COMPLETED') for r in rows)
        if deadline is not None and time.time() > deadline:
            raise TimeoutError(f'jobs still queued after {timeout:.0f} s')
        time.sleep(poll)


def cancel(pipeline: Pipeline) -> List[str]:
    """scancel every recorded job still pending or running; returns their ids."""
    ids = [r['job_id'] for r in stage_states(pipeline) if r['state'] in LIVE_STATES]
    if ids:
        _slurm('scancel', *ids)
    return ids

