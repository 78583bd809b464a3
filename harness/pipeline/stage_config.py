"""The config a train / test stage runs: picked for its backbone, checked to record a result (``experiment``, of a
task whose record the pipeline knows), the ``--backbone`` swap it needs, and the digest of what it holds that tells a
changed recipe (harness/pipeline/record.py)."""
import hashlib
import json
import os.path as osp
from typing import Dict

from mmengine.config import Config

from vitbench.console import config_path
from vitbench.results.schema import task_names, task_of

from .dag import PipelineError, Stage


def bind_config(path: str, stage: Stage, cache: Dict[str, dict]) -> None:
    """Pick the stage's config for its backbone, check it records a result, decide the --backbone swap."""
    where = f"{path}: stage '{stage.name}'"
    config = stage.spec['config']
    if isinstance(config, dict):
        config = config.get(stage.backbone, config.get('*'))
        if config is None:
            raise PipelineError(f"{where}: key 'config' has no entry for backbone '{stage.backbone}' (it has "
                                f"{sorted(stage.spec['config'])}; add it, or '*' for any other backbone)")
    config = config_path(config)  # from the working directory, else shipped with vitbench (configs/demo/... anywhere)
    if config not in cache:
        if not osp.isfile(config):
            raise PipelineError(f"{where}: config file '{config}' not found")
        try:
            cfg = Config.fromfile(config, import_custom_modules=False)
        except Exception as e:
            raise PipelineError(f"{where}: config file '{config}' could not be read: {type(e).__name__}: {e}") from e
        experiment = cfg.get('experiment') or {}
        missing = [k for k in ('task', 'dataset', 'backbone') if not experiment.get(k)]
        if missing:
            raise PipelineError(f"{where}: config '{config}' has no experiment {missing}: without them the run "
                                'writes no result.json and the pipeline cannot tell that the stage finished')
        if task_of(experiment['task']) is None:  # the pipeline's summaries and leaderboards read its record
            raise PipelineError(f"{where}: config '{config}' has experiment.task={experiment['task']!r}, expected "
                                f"one of {task_names()} (a task from outside the suite: its package in the pipeline's "
                                'imports, or --imports)')
        # the values, not the text: a comment or a reformatting is no change of recipe
        content = json.dumps(cfg.to_dict(), sort_keys=True, default=_by_name)
        cache[config] = dict(experiment=dict(experiment), digest=hashlib.sha256(content.encode()).hexdigest())
    experiment = cache[config]['experiment']
    stage.config, stage.task, stage.config_digest = config, experiment['task'], cache[config]['digest']
    if stage.backbone and stage.backbone != experiment['backbone']:
        stage.swap = stage.backbone


def _by_name(value) -> str:
    """What JSON cannot write (a class or function of a lazy-import config): its name, which is the same in every
    run, never its repr, which may hold its address."""
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__qualname__)}"
