"""Running a :class:`~harness.pipeline.Pipeline`: each stage a subprocess of tools/train.py / tools/test.py (or its
command) in its own work dir, with a progress line per stage and a summary at the end.

* A ``train``/``test`` stage whose ``result.json`` (and declared ``outputs``) exists is done: it is skipped,
  unless its recipe changed since it ran (:mod:`.record`): then it runs again from the start, and so do the stages
  built on it. With ``resume``, a stage that started but did not finish continues from its last checkpoint.
* A stage that fails (non-zero exit, or no result.json) is reported with the end of its log; the stages that
  depend on it are skipped, the others go on. A ``leaderboard`` stage runs anyway: it tabulates what finished.
* Every stage's output goes to ``WORK_DIR/pipeline.log``; ``verbose`` also echoes it, otherwise the latest
  training progress line is shown at most every ``heartbeat`` seconds.
* ``jobs`` stages whose dependencies are done run at the same time (declaration order first), each with
  ``cpu_count // jobs`` threads: small models scale badly over threads, so two one-thread runs on two cores
  finish sooner than the same runs one after the other with two threads each.
* The pipeline owns its stages. It holds ``WORK_DIR/pipeline.lock`` while it runs (a second pipeline there
  refuses; the lock of one that died is taken over, with a line). Each stage runs in a process group of its own,
  which an interrupted pipeline (SIGINT, or SIGTERM through tools/pipeline.py) stops: SIGTERM, then SIGKILL after
  ``STOP_GRACE_S`` (:mod:`.stage_process`). On Linux a stage also gets SIGTERM when the pipeline is killed
  outright (kill -9). A stage whose folder a live training holds (``run.lock``, taken by every tools/train.py) is
  not started twice.
* On a machine with GPUs (:mod:`.gpus`), each train / test stage gets ``gpus_per_stage`` of them through
  ``CUDA_VISIBLE_DEVICES``, the least used first: ``jobs 8`` on an 8-GPU node runs eight stages on a GPU each; a
  stage of several GPUs runs under torchrun (one process per GPU). Stages under a launcher of their own (srun, the
  pipeline's ``launcher`` prefix) are placed by it, not here.
* On a machine without GPUs, local train / test stages (plain python, no launcher) are forked from a process that
  has imported torch, mmengine, mmseg, mmdet, timm and the suite once (:mod:`.preload`): each starts some seconds
  sooner, with every guarantee above. Not where there are GPUs: that process has asked CUDA how many devices there
  are (mmengine does at import), and CUDA state does not survive a fork ("Cannot re-initialize CUDA in forked
  subprocess"); there, as under ``VITBENCH_NO_PRELOAD=1``, they start as fresh subprocesses, as the other stages do.
"""
import json
import os
import os.path as osp
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import asdict
from typing import Dict, List, Optional, TextIO

from vitbench.fileio import RUN_LOCK, FolderInUse, FolderLock, atomic_write_text
from vitbench.results.schema import DIVERGED_EXIT_STATUS

from . import leaderboard_stage, preload
from .command import command_of, launch_of, resolve
from .eta import SUMMARY_NAME, Eta
from .gpus import GpuError, GpuPool, visible_gpus
from .record import (changes, diverged, is_done, key_metric, missing_outputs, set_aside, stage_record,
                     write_record)
from .spec import Pipeline, PipelineError, Stage
from .stage_log import error_cause, log_tail, progress_of
from .stage_process import start_stage, stop_stages
from .stage_result import UNFINISHED, StageResult

LOG_NAME = 'pipeline.log'
LOCK_NAME = 'pipeline.lock'


def _duration(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f'{minutes}m{seconds:02d}s' if minutes else f'{seconds}s'


class PipelineRunner:
    def __init__(self, pipeline: Pipeline, resume: bool = False, verbose: bool = False, out: TextIO = None,
                 heartbeat: float = 60.0, jobs: Optional[int] = None, launcher: Optional[str] = None,
                 gpus: Optional[List[str]] = None, gpus_per_stage: int = 1):
        self.pipeline, self.resume, self.verbose, self.heartbeat = pipeline, resume, verbose, heartbeat
        self.launcher = launcher  # the --launcher of train / test stages (command_of)
        self.jobs = jobs or pipeline.jobs
        # the GPUs local train / test stages share (default: what this process sees); GpuError if too few. Not where
        # a launcher of their own (srun, the pipeline's torchrun prefix) starts them: it places its processes
        if (launcher or pipeline.launcher) and gpus_per_stage > 1:
            raise GpuError(f'--gpus-per-stage {gpus_per_stage}: the stages start under a launcher of their own '
                           f'({launcher or " ".join(pipeline.launcher)}), which decides their processes and GPUs')
        self.gpus = GpuPool([] if launcher or pipeline.launcher else visible_gpus() if gpus is None else gpus,
                            gpus_per_stage)
        self.out = out or sys.stdout
        self.results: Dict[str, StageResult] = {}
        self._lock = threading.Lock()  # console lines of concurrent stages
        self._processes = set()
        self._stopping = False  # interrupted: a stage that ends now was stopped, it did not fail
        self._preloaded = False  # this run forks its _forkable stages from the preload server
        self.eta: Optional[Eta] = None  # the remaining time of a run (:mod:`.eta`); None for one stage alone

    def say(self, text: str) -> None:
        with self._lock:
            print(text, file=self.out, flush=True)

    def _environment(self) -> Dict[str, str]:
        """Concurrent stages share the cores: each gets cpu_count // jobs threads (unless the user set them)."""
        env = dict(os.environ)
        if self.jobs > 1 and 'OMP_NUM_THREADS' not in env:
            env['OMP_NUM_THREADS'] = str(max(1, (os.cpu_count() or 1) // self.jobs))
        return env

    # ------------------------------------------------------------------------------------------ planning

    def plan(self) -> List[str]:
        """What a run would do, stage by stage (``--dry-run``)."""
        lines = list(self.pipeline.left_out)
        for i, stage in enumerate(self.pipeline.stages, 1):
            done = is_done(self.pipeline, stage)
            changed = [] if done else changes(self.pipeline, stage)
            state = ('done, skipped' if done else
                     f'to run again from the start: {"; ".join(changed)}' if changed else 'to run')
            lines.append(f'[{i}/{len(self.pipeline.stages)}] {stage.id} ({stage.kind}; {state}) '
                         f'after: {", ".join(stage.deps) or "-"}')
            if stage.kind == 'leaderboard':
                runs = self.leaderboard_runs(stage, existing=False)
                baseline = f' (baseline: {stage.spec["baseline"]})' if stage.spec.get('baseline') else ''
                lines.append(f'    leaderboard of {" ".join(runs) if len(runs) < 4 else f"{len(runs)} run dirs"} '
                             f'-> {resolve(self.pipeline, stage, stage.spec["out"])}.'
                             f'{{{",".join(stage.spec["formats"])}}}{baseline}')
                continue
            try:
                argv = self._command(stage)
                lines.append('    ' + subprocess.list2cmdline(argv))
            except PipelineError as e:  # e.g. {upernet.last_checkpoint} before upernet ran
                lines.append(f'    (command known once its dependencies ran: {e})')
        return lines

    # ------------------------------------------------------------------------------------------ running

    def run(self) -> List[StageResult]:
        """Run the stages; raises :class:`PipelineError` if another pipeline runs in the work dir."""
        lock = FolderLock(self.pipeline.work_dir, LOCK_NAME)
        try:
            dead = lock.acquire()
        except FolderInUse as e:
            raise PipelineError(f'{e}: another pipeline runs there; wait for it to end, or stop it') from None
        try:
            if dead:
                self.say(f'took over the lock of {dead}, which is no longer running ({lock.path})')
            return self._run()
        finally:
            lock.release()

    def _run(self) -> List[StageResult]:
        stages = self.pipeline.stages
        backbones = f', backbones {", ".join(self.pipeline.backbones)}' if self.pipeline.backbones else ''
        seeds = f', seeds {", ".join(map(str, self.pipeline.seeds))}' if self.pipeline.seeds else ''
        jobs = f', {self.jobs} at a time' if self.jobs > 1 else ''
        self.say(f'pipeline {self.pipeline.path}: {len(stages)} stages{backbones}{seeds}{jobs}, '
                 f'work dir {self.pipeline.work_dir}')
        for why in self.pipeline.left_out:
            self.say(why)
        counters = {s.id: f'[{i}/{len(stages)}]' for i, s in enumerate(stages, 1)}
        pending, running = list(stages), {}
        start = time.time()
        done_before = {s.id for s in stages if is_done(self.pipeline, s)}
        self.eta = Eta(self.pipeline, self.jobs, done_before)
        if self.eta.line():
            self.say(self.eta.line())
        # before the pool's threads: starting the server sets os.environ for a moment (preload.start)
        if any(self._forkable(s) and s.id not in done_before for s in stages):
            self._preloaded = preload.start(self._environment())
        with ThreadPoolExecutor(self.jobs) as pool:
            try:
                while pending or running:
                    for stage in [s for s in pending if all(d in self.results for d in s.deps)]:
                        if len(running) == self.jobs:
                            break
                        pending.remove(stage)
                        running[pool.submit(self._run_stage, stage, counters[stage.id])] = stage
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        stage, result = running.pop(future), future.result()
                        self.results[stage.id] = result
                        self.eta.ended(stage, result.status, result.seconds)
            except KeyboardInterrupt:
                self.say('interrupted: stopping the running stages')
                self._stopping = True  # first: a stage starting from now on stops itself (_execute)
                stop_stages(list(self._processes))
                for stage in list(running.values()) + pending:
                    self.results[stage.id] = StageResult(stage.id, 'interrupted')
            finally:
                self.write_summary(time.time() - start)
        return [self.results[s.id] for s in stages]

    def run_stage(self, stage: Stage, counter: str) -> StageResult:
        """One stage alone, its dependencies taken as finished (a batch system started it after them)."""
        self.results.update({d: StageResult(d, 'cached') for d in stage.deps if d not in self.results})
        return self._run_stage(stage, counter)

    def _run_stage(self, stage: Stage, counter: str) -> StageResult:
        failed = [d for d in stage.deps if self.results[d].status in UNFINISHED]
        if failed and stage.kind != 'leaderboard':
            self.say(f'{counter} {stage.id}: skipped, {failed[0]} did not finish')
            return StageResult(stage.id, 'blocked', detail=f'{", ".join(failed)} did not finish')
        if is_done(self.pipeline, stage):
            metric = key_metric(self.pipeline, stage)
            self.say(f'{counter} {stage.id}: done before, skipped' + (f' ({metric})' if metric else ''))
            return StageResult(stage.id, 'cached', metric=metric, detail='result.json exists')
        start = time.time()
        if stage.kind == 'leaderboard':
            return leaderboard_stage.run_leaderboard(self.pipeline, stage, counter, start, self.results, self.say)
        os.makedirs(stage.work_dir, exist_ok=True)
        log = osp.join(stage.work_dir, LOG_NAME)
        try:
            trainer = FolderLock(stage.work_dir, RUN_LOCK).holder()
            if trainer:  # e.g. left running by a pipeline killed before pipelines stopped their stages
                raise PipelineError(f'a training still runs in {stage.work_dir} ({trainer}): not started twice; '
                                    'wait for it to end, or stop it')
            changed = changes(self.pipeline, stage)
            if changed:  # neither its result nor its checkpoint pointer is of this recipe: not done, not resumed
                kept = ', '.join(f'{name}.stale' for name in set_aside(stage, self.pipeline))
                self.say(f'{counter} {stage.id}: its recipe changed since it ran ({"; ".join(changed)}): it runs '
                         'again from the start' + (f', the earlier files kept as {kept}' if kept else ''))
            argv = self._command(stage)
        except PipelineError as e:
            self.say(f'{counter} {stage.id}: FAILED: {e}')
            return StageResult(stage.id, 'failed', detail=str(e), log=log)
        if stage.kind in ('train', 'test'):
            write_record(self.pipeline, stage)
        if self.eta:
            self.eta.started(stage)
        self.say(f'{counter} {stage.id}: running' + (' (resuming)' if '--resume' in argv else '') + f', log {log}'
                 + self._eta_suffix())
        offset = osp.getsize(log) if osp.isfile(log) else 0
        devices = self.gpus.take() if stage.kind in ('train', 'test') else []
        try:
            if devices:
                self.say(f'{counter} {stage.id}: on GPU {",".join(devices)}')
            returncode = self._execute(argv, log, stage.id, fork=self._preloaded and self._forkable(stage),
                                       devices=devices)
        finally:
            self.gpus.give_back(devices)
        seconds = time.time() - start
        if self._stopping:
            return StageResult(stage.id, 'interrupted', seconds, log=log)
        where = diverged(self.pipeline, stage) if returncode == DIVERGED_EXIT_STATUS else ''
        if where:  # recorded as such (result.json status 'diverged'): reported, never tabulated as a number
            self.say(f'{counter} {stage.id}: DIVERGED after {_duration(seconds)}: {where}; nothing exported, the '
                     f'stages after it are skipped (log {log})')
            return StageResult(stage.id, 'diverged', seconds, detail=where, log=log)
        if returncode != 0:
            cause = error_cause(log, offset)
            detail = f'exit status {returncode}' + (f': {cause}' if cause else '')
        elif stage.kind in ('train', 'test') and stage_record(self.pipeline, stage) is None:
            detail = 'finished without writing its result.json'
        elif missing_outputs(stage):
            detail = f'finished without writing {", ".join(missing_outputs(stage))}'
        else:
            metric = key_metric(self.pipeline, stage)
            if self.eta:
                self.eta.ended(stage, 'ran', seconds)
            self.say(f'{counter} {stage.id}: ok in {_duration(seconds)}' + (f', {metric}' if metric else '')
                     + self._eta_suffix())
            return StageResult(stage.id, 'ran', seconds, metric, log=log)
        if self.eta:
            self.eta.ended(stage, 'failed', seconds)
        self.say(f'{counter} {stage.id}: FAILED after {_duration(seconds)} ({detail}); end of {log}:')
        self.say(''.join(f'    | {line}' for line in log_tail(log, 15, offset)).rstrip())
        return StageResult(stage.id, 'failed', seconds, detail=detail, log=log)

    def _eta_suffix(self, separator: str = '; ') -> str:
        line = self.eta.line() if self.eta else ''
        return separator + line if line else ''

    def _command(self, stage: Stage) -> List[str]:
        return command_of(self.pipeline, stage, self.resume, self.launcher, self.gpus.per_stage)

    def _forkable(self, stage: Stage) -> bool:
        """A train / test stage run by this python, no launcher, on a machine without GPUs (no CUDA state may
        cross the fork from the preload server): ``[sys.executable, tools/train.py, ...]``."""
        return (stage.kind in ('train', 'test') and not self.gpus.gpus and
                launch_of(self.pipeline, self.launcher, self.gpus.per_stage) == ([sys.executable], None))

    def _execute(self, argv: List[str], log: str, stage_id: str, fork: bool = False,
                 devices: List[str] = ()) -> int:
        prefix = f'    {stage_id}: ' if self.jobs > 1 else '    '
        env = self._environment()
        if devices:
            env['CUDA_VISIBLE_DEVICES'] = ','.join(devices)
        with open(log, 'a', encoding='utf-8') as f:
            gpus = f'CUDA_VISIBLE_DEVICES={env["CUDA_VISIBLE_DEVICES"]} ' if devices else ''
            f.write(f'\n=== {time.strftime("%Y-%m-%d %H:%M:%S")} {gpus}{subprocess.list2cmdline(argv)}\n')
            f.flush()
            process = start_stage(argv, env, fork)
            self._processes.add(process)
            if self._stopping:  # started as the pipeline was interrupted, after it stopped the others
                stop_stages([process])
            last_beat, progress = time.time(), None
            try:
                for line in process.stdout:
                    f.write(line)
                    if self.verbose:
                        self.say(prefix + line.rstrip('\n'))
                    else:
                        progress = progress_of(line) or progress
                    if not self.verbose and progress and time.time() - last_beat >= self.heartbeat:
                        self.say(prefix + progress[:160] + self._eta_suffix(' | '))
                        last_beat, progress = time.time(), None
                return process.wait()
            except BaseException:
                stop_stages([process])
                raise
            finally:
                self._processes.discard(process)

    def leaderboard_runs(self, stage: Stage, existing: bool = True) -> List[str]:
        """Its ``runs``, else the work dirs of the train / test stages it depends on (that ran)."""
        return leaderboard_stage.runs_of(self.pipeline, stage, existing)

    # ------------------------------------------------------------------------------------------ summary

    def summary_lines(self) -> List[str]:
        rows = [(r.id, r.status, _duration(r.seconds) if r.seconds else '-', r.metric or r.detail)
                for r in (self.results.get(s.id) or StageResult(s.id, 'not run') for s in self.pipeline.stages)]
        width = [max(len(row[i]) for row in rows + [('stage', 'status', 'time', '')]) for i in range(3)]
        lines = [f'{"stage":{width[0]}}  {"status":{width[1]}}  {"time":>{width[2]}}  metric / detail']
        lines += [f'{a:{width[0]}}  {b:{width[1]}}  {c:>{width[2]}}  {d}' for a, b, c, d in rows]
        return lines

    def write_summary(self, seconds: float = 0.0) -> None:
        self.say(f'\nsummary ({_duration(seconds)} in all)')
        for line in self.summary_lines():
            self.say('  ' + line)
        summary = dict(pipeline=self.pipeline.path, backbones=self.pipeline.backbones, seeds=self.pipeline.seeds,
                       seconds=seconds, jobs=self.jobs, stages=[asdict(r) for r in self.results.values()])
        atomic_write_text(json.dumps(summary, indent=2), osp.join(self.pipeline.work_dir, SUMMARY_NAME))

    @property
    def ok(self) -> bool:
        return all(r.status in ('ran', 'cached') for r in self.results.values())

