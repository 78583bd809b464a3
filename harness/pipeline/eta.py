"""The time a pipeline run still needs: the expected cost of each stage that has yet to finish, measured where it can
be, and the ETA the console lines of :mod:`harness.pipeline.run` carry.

A stage's expected cost, the first of:

1. **its own earlier run**: the seconds ``WORK_DIR/pipeline_summary.json`` of an earlier pipeline run in the same
   work dir recorded for the same stage id (a stage that runs again: it failed, its recipe changed, it was deleted);
2. **the same stage of other backbones and seeds**: the mean of what the stages of the same declared name (the
   ``upernet`` of every backbone and seed) took, in this run as they finish (the pipeline's clock, start-up
   and evaluation included), in earlier runs (``pipeline_summary.json``), or as their ``result.json`` says
   (``cost.wall_s``: the training's own clock, for a stage done before);
3. **an estimate** by kind, :data:`ESTIMATE_S` (a demo-scale training takes about a minute on two cores; a stage
   of a real-scale config takes hours, so its first instance is an underestimate until one has finished).

The ETA is the sum of the expected costs of the stages still to run, less the time the running ones have had,
divided by the stages that run at a time (``jobs``); stages that will be skipped (done before, or after a stage
that did not finish) count nothing. It updates as stages finish (measured costs replace estimates) and at each
progress line.
"""
import json
import os.path as osp
import threading
import time
from statistics import mean
from typing import Dict, Iterable, Optional

from .dag import Pipeline, Stage

SUMMARY_NAME = 'pipeline_summary.json'
# seconds a stage of a kind is expected to take when nothing of it was measured (docs/pipeline.md, "Progress")
ESTIMATE_S = dict(train=120.0, test=30.0, command=30.0, leaderboard=10.0)


def duration(seconds: float) -> str:
    """'1h02m', '4m05s', '17s'."""
    seconds = int(round(max(seconds, 0.0)))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f'{hours}h{minutes:02d}m' if hours else f'{minutes}m{seconds:02d}s' if minutes else f'{seconds}s'


def _earlier_summary(work_dir: str) -> Dict[str, float]:
    """{stage id: seconds} of the stages an earlier run in ``work_dir`` ran to the end."""
    try:
        with open(osp.join(work_dir, SUMMARY_NAME)) as f:
            stages = json.load(f).get('stages') or []
    except (OSError, ValueError, AttributeError):
        return {}
    return {s['id']: float(s['seconds']) for s in stages
            if isinstance(s, dict) and s.get('status') == 'ran' and (s.get('seconds') or 0) > 0 and s.get('id')}


def _recorded_wall_s(stage: Stage) -> Optional[float]:
    """``cost.wall_s`` of the stage's result.json, if it has one."""
    try:
        with open(osp.join(stage.work_dir, 'result.json')) as f:
            wall_s = (json.load(f).get('cost') or {}).get('wall_s')
    except (OSError, ValueError, AttributeError):
        return None
    return float(wall_s) if isinstance(wall_s, (int, float)) and wall_s > 0 else None


class StageCosts:
    """The expected seconds of a pipeline's stages, learning from the ones that finish (:meth:`finished`)."""

    def __init__(self, pipeline: Pipeline, done_before: Iterable[str] = ()):
        self.pipeline = pipeline
        self.earlier = _earlier_summary(pipeline.work_dir)
        self.measured: Dict[str, float] = {}  # stage id -> seconds, this run's and earlier ones'
        by_id = {s.id: s for s in pipeline.stages}
        self.names = {s.id: s.name for s in pipeline.stages}  # a paper table's pipeline has hundreds of stages
        for stage_id, seconds in self.earlier.items():
            if stage_id in by_id:
                self.measured[stage_id] = seconds
        for stage_id in done_before:
            recorded = _recorded_wall_s(by_id[stage_id])
            if stage_id not in self.measured and recorded:
                self.measured[stage_id] = recorded

    def finished(self, stage: Stage, seconds: float) -> None:
        """A stage of this run ran to the end in ``seconds``: what the stages of its name now expect."""
        if seconds > 0:
            self.measured[stage.id] = seconds

    def expected(self, stage: Stage) -> float:
        return self.source(stage)[0]

    def source(self, stage: Stage):
        """(expected seconds, 'measured' | 'estimated')."""
        if stage.id in self.earlier:
            return self.earlier[stage.id], 'measured'
        same = [seconds for stage_id, seconds in self.measured.items()
                if self.names.get(stage_id) == stage.name and stage_id != stage.id]
        if same:
            return mean(same), 'measured'
        return ESTIMATE_S.get(stage.kind, ESTIMATE_S['command']), 'estimated'


class Eta:
    """The remaining time of a run: :meth:`line` for the console, after each change of :meth:`started` /
    :meth:`ended`."""

    def __init__(self, pipeline: Pipeline, jobs: int, done_before: Iterable[str] = (), clock=time.time):
        self.pipeline, self.jobs, self.clock = pipeline, max(1, jobs), clock
        self.skipped = set(done_before)  # stages that cost nothing: done before, or blocked by a failed one
        self.costs = StageCosts(pipeline, done_before)
        self.running: Dict[str, float] = {}  # stage id -> when it started
        self.ended_ids = set()
        self._lock = threading.Lock()  # concurrent stages start and end from the pipeline's threads

    def started(self, stage: Stage) -> None:
        with self._lock:
            self.running[stage.id] = self.clock()

    def ended(self, stage: Stage, status: str, seconds: float = 0.0) -> None:
        with self._lock:
            self.running.pop(stage.id, None)
            self.ended_ids.add(stage.id)
            if status == 'ran':
                self.costs.finished(stage, seconds)
            elif status != 'cached':  # failed, diverged, blocked: what depends on it will be skipped
                self._skip_dependents(stage.id)

    def _skip_dependents(self, stage_id: str) -> None:
        doomed = {stage_id}
        for stage in self.pipeline.stages:  # run order: every stage after its dependencies
            if stage.kind != 'leaderboard' and doomed & set(stage.deps):
                doomed.add(stage.id)
                self.skipped.add(stage.id)

    def remaining(self) -> float:
        """Seconds of work left, divided among the stages that run at a time."""
        now, left = self.clock(), 0.0
        for stage in self.pipeline.stages:
            if stage.id in self.ended_ids or stage.id in self.skipped:
                continue
            expected = self.costs.expected(stage)
            if stage.id in self.running:
                expected = max(expected - (now - self.running[stage.id]), 0.0)
            left += expected
        return left / self.jobs

    def counts(self):
        """(stages to run whose cost is measured, those estimated)."""
        sources = [self.costs.source(s)[1] for s in self.pipeline.stages
                   if s.id not in self.ended_ids and s.id not in self.skipped]
        return sources.count('measured'), sources.count('estimated')

    def line(self) -> str:
        """'pipeline ETA 4m10s (~22:14; 3 stages measured, 2 estimated)': the time left, when the run should end
        (local time) and how many of the stages still to run have a measured cost; '' once none is left."""
        with self._lock:
            seconds = self.remaining()
            measured, estimated = self.counts()
        if not measured + estimated:
            return ''  # nothing left to run
        finish = time.strftime('%H:%M', time.localtime(time.time() + seconds))
        basis = (f'{measured} stage{"s" * (measured != 1)} measured' if measured else '') + \
                (', ' if measured and estimated else '') + \
                (f'{estimated} estimated' if estimated else '')
        return f'pipeline ETA {duration(seconds)} (~{finish}; {basis})'
