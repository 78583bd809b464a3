"""What a stage's folder says: whether the stage is done (:func:`is_done`), its key metric, and what it was run as.

A train / test stage is done when its result.json and declared ``outputs`` exist under the recipe it has now.
``WORK_DIR/stage.json`` records the recipe, written when the pipeline starts the stage: what decides its result,
that is its config's content (``_base_`` files merged; comments and layout do not count), its ``cfg_options``,
``args``, ``checkpoint``, ``weights``, ``tta``, seed and ``--backbone`` swap, and the recipes of the stages it
depends on (a pre-training that changed makes every downstream stage built on it change too). A stage whose
recorded recipe differs from its recipe now is not done, even with a result.json: the pipeline runs it again from
the start, keeping the earlier result as ``result.json.stale`` (:func:`set_aside`). A folder without a record (run
before records existed, or by hand) is judged by its result.json alone. A command stage is done when its
``creates`` exists; what it made is not part of the recipes built on it (regenerated data does not make the
stages that read it run again: delete their folders).

A stage's result is its own run's record only (:func:`stage_record`): a train stage's ``WORK_DIR/result.json`` of
``run.kind`` 'training', a test stage's evaluation record of the checkpoint it tests
(``WORK_DIR/eval/<checkpoint name>/result.json``, ``run.kind`` 'evaluation', naming that checkpoint). An evaluation
record in a training's place is not the training's result (tools/test.py once wrote its record over the training's,
and the pipeline took the other checkpoint's numbers as the stage's). A record without ``run`` (written before
records said their kind) is judged as before.
"""
import hashlib
import json
import os
import os.path as osp
from typing import List, Optional

from vitbench.fileio import atomic_write_text
from vitbench.results.schema import DIVERGED, EVALUATION, TRAINING, evaluation_dir, task_of

from .command import resolve
from .spec import Pipeline, PipelineError, Stage

RECORD_NAME = 'stage.json'
STALE_SUFFIX = '.stale'
_RECIPE_KEYS = ('cfg_options', 'args', 'checkpoint', 'weights', 'tta')  # the spec keys that change a result
_SET_ASIDE = ('result.json', RECORD_NAME, 'last_checkpoint')  # what makes a folder count as done or resumable


def recipe_of(pipeline: Pipeline, stage: Stage) -> dict:
    """What decides a train / test stage's result, as JSON values (``{...}`` references unresolved: the
    dependencies' recipes stand for what they mean)."""
    recipe = dict(kind=stage.kind, config=stage.config, config_digest=stage.config_digest, seed=stage.seed,
                  backbone=stage.swap)
    recipe.update({k: stage.spec[k] for k in _RECIPE_KEYS if stage.spec.get(k) not in (None, [], {})})
    # a command's argv does not say what it made (the demo data's options include its worker count): not tracked
    recipe['after'] = {d: fingerprint(pipeline, pipeline.stage(d)) for d in stage.deps
                       if pipeline.stage(d).kind in ('train', 'test')}
    return json.loads(json.dumps(recipe, sort_keys=True))  # tuples -> lists: as the record reads back


def fingerprint(pipeline: Pipeline, stage: Stage) -> str:
    return _digest(recipe_of(pipeline, stage))


def _digest(recipe: dict) -> str:
    return hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]


def read_record(stage: Stage) -> Optional[dict]:
    """The folder's record; None when it has none, ``{}`` when it cannot be read (it vouches for nothing)."""
    path = osp.join(stage.work_dir, RECORD_NAME)
    if not osp.isfile(path):
        return None
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def changes(pipeline: Pipeline, stage: Stage) -> List[str]:
    """How the stage's recipe now differs from the one its folder's record holds (``[]``: the same, or no
    record), e.g. ``["config configs/demo/sup_demo.py changed", "'mae' (a dependency) changed"]``."""
    if stage.kind not in ('train', 'test'):
        return []
    record = read_record(stage)
    if record is None:
        return []
    before, now = record.get('recipe') or {}, recipe_of(pipeline, stage)
    if not before:
        return [f'its record {osp.join(stage.work_dir, RECORD_NAME)} is unreadable']
    found = []
    if before.get('config_digest') != now['config_digest'] and before.get('config') == now['config']:
        found.append(f'config {stage.config} changed')
    for key in sorted(set(before) | set(now)):
        if key == 'config_digest' or before.get(key) == now.get(key):
            continue
        if key == 'after':
            was = before.get(key) or {}
            found += [f"'{d}' (a dependency) changed" for d in sorted(set(was) | set(now[key]))
                      if was.get(d) != now[key].get(d)]
        else:
            found.append(f'{key} changed')
    return found


def write_record(pipeline: Pipeline, stage: Stage) -> None:
    recipe = recipe_of(pipeline, stage)
    record = dict(stage=stage.id, fingerprint=_digest(recipe), recipe=recipe)
    atomic_write_text(json.dumps(record, indent=2, sort_keys=True) + '\n', osp.join(stage.work_dir, RECORD_NAME))


def result_path(pipeline: Pipeline, stage: Stage) -> Optional[str]:
    """Where the stage's run writes its record: a training ``WORK_DIR/result.json``, a test the evaluation record of
    its checkpoint (None while that checkpoint is not known: ``{STAGE.last_checkpoint}`` before STAGE ran)."""
    if stage.kind == 'test':
        try:
            weights = resolve(pipeline, stage, stage.spec['weights'])
        except PipelineError:
            return None
        return osp.join(evaluation_dir(stage.work_dir, weights), 'result.json')
    return osp.join(stage.work_dir, 'result.json')


def stage_record(pipeline: Pipeline, stage: Stage) -> Optional[dict]:
    """The record of the stage's own run, else None (none, unreadable, or of another kind of run: an evaluation
    where a training's record belongs, or the evaluation of another checkpoint)."""
    path = result_path(pipeline, stage)
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, TypeError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    run = record.get('run')
    if run is None:
        return record  # written before records said their kind: judged by its presence, as then
    kind = run.get('kind') if isinstance(run, dict) else None
    if stage.kind == 'test':
        checkpoint = run.get('checkpoint') if isinstance(run, dict) else None
        tested = checkpoint.get('path') if isinstance(checkpoint, dict) else None
        weights = resolve(pipeline, stage, stage.spec['weights'])
        same = isinstance(tested, str) and osp.realpath(tested) == osp.realpath(weights)
        return record if kind == EVALUATION and same else None
    return record if kind == TRAINING else None


def set_aside(stage: Stage, pipeline: Optional[Pipeline] = None) -> List[str]:
    """Make the folder of a changed stage start afresh: its result.json (a test's evaluation record too), record
    and last-checkpoint pointer get ``.stale`` (replacing older ones), so that it is neither done nor resumed. The
    checkpoints stay (the new run overwrites them). Returns the names set aside."""
    moved = []
    paths = [osp.join(stage.work_dir, name) for name in _SET_ASIDE]
    own = result_path(pipeline, stage) if pipeline is not None else None
    for path in paths + ([own] if own and own not in paths else []):
        if osp.isfile(path):
            os.replace(path, path + STALE_SUFFIX)
            moved.append(osp.relpath(path, stage.work_dir))
    return moved


def is_done(pipeline: Pipeline, stage: Stage) -> bool:
    """train / test: its own run's record and the declared outputs exist, from the recipe it has now; command:
    its ``creates`` exists."""
    if stage.kind in ('train', 'test'):
        record = stage_record(pipeline, stage)
        return (record is not None and record.get('status') != DIVERGED
                and not missing_outputs(stage) and not changes(pipeline, stage))
    if stage.kind == 'command' and stage.spec.get('creates'):
        return osp.exists(resolve(pipeline, stage, stage.spec['creates']))
    return False


def diverged(pipeline: Pipeline, stage: Stage) -> str:
    """Where the stage's training stopped with a non-finite loss (its result.json ``status`` 'diverged'); ''
    for any other stage. A diverged stage is not done: it runs again."""
    record = stage_record(pipeline, stage) or {}
    if record.get('status') != DIVERGED:
        return ''
    where = record.get('diverged') if isinstance(record.get('diverged'), dict) else {}
    return f"diverged at iteration {where.get('iteration')} (loss {where.get('loss')})"


def missing_outputs(stage: Stage) -> List[str]:
    return [p for p in stage.spec.get('outputs') or [] if not osp.exists(osp.join(stage.work_dir, p))]


def key_metric(pipeline: Pipeline, stage: Stage) -> str:
    """'mIoU 47.75' from the stage's own record (its ``metric``, else the task's usual one)."""
    record = stage_record(pipeline, stage) or {}
    metrics = record.get('metrics')
    if not isinstance(metrics, dict):
        return ''
    # the task's headline metrics; a run without them (MAE pre-training) by its final loss
    task = task_of(record.get('task'))
    headline = [m.name for m in (task.metrics if task else ())] + ['loss']
    names = (stage.spec['metric'],) if stage.spec.get('metric') else headline
    shown = [f'{n} {metrics[n]:.2f}' for n in names if isinstance(metrics.get(n), (int, float))]
    return ', '.join(shown[:task.shown_metrics if task else 1])
