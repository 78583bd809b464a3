"""Experiment trackers for a training, ``--vis-backend tensorboard|wandb|mlflow`` (tools/train.py; tools/pipeline.py
passes it on to every train stage): mmengine's own vis backends, added to the config's ``visualizer.vis_backends``
next to its LocalVisBackend (``WORK_DIR/<time>/vis_data/scalars.json`` stays). Each tracker is an optional extra;
torch-free, so that the pipeline can say that one is missing before it starts a stage."""
import importlib.util
import os
import os.path as osp
from typing import Iterable, List, Optional

# --vis-backend NAME -> (mmengine's backend, the module it imports, the extra that installs it)
TRACKERS = {
    'tensorboard': ('TensorboardVisBackend', 'tensorboard', 'tensorboard'),  # torch.utils.tensorboard needs it
    'wandb': ('WandbVisBackend', 'wandb', 'wandb'),
    'mlflow': ('MLflowVisBackend', 'mlflow', 'mlflow'),
}


def missing_tracker(name: str) -> Optional[str]:
    """The one line to say when ``name``'s package is not installed (None when it is)."""
    _, module, extra = TRACKERS[name]
    if importlib.util.find_spec(module) is not None:
        return None
    return (f"--vis-backend {name}: the package '{module}' is not installed; install it with "
            f"pip install 'vitbench[{extra}]' (all three trackers: 'vitbench[tracking]')")


def tracker_backend(name: str, run_name: str) -> dict:
    """The vis backend config of a tracker. Each writes into the run's ``WORK_DIR/<time>/vis_data`` beside
    scalars.json: TensorBoard its event file; W&B an offline run (``wandb sync`` uploads it later) unless WANDB_MODE
    says otherwise; MLflow a file store unless MLFLOW_TRACKING_URI names another store or server."""
    backend = dict(type=TRACKERS[name][0])
    if name == 'wandb':
        init = dict(project=os.environ.get('WANDB_PROJECT', 'vitbench'), name=os.environ.get('WANDB_NAME', run_name))
        if not os.environ.get('WANDB_MODE'):
            init['mode'] = 'offline'  # nothing leaves the machine unless the user asked for it
        backend['init_kwargs'] = init
    elif name == 'mlflow':
        backend.update(exp_name=os.environ.get('MLFLOW_EXPERIMENT_NAME', 'vitbench'), run_name=run_name)
        if os.environ.get('MLFLOW_TRACKING_URI'):  # mmengine would replace it by its file store
            backend['tracking_uri'] = os.environ['MLFLOW_TRACKING_URI']
        else:  # MLflow 3 refuses its file store (in maintenance) unless asked for it; a local store needs no server
            os.environ.setdefault('MLFLOW_ALLOW_FILE_STORE', 'true')
    return backend


def add_trackers(cfg, names: Iterable[str]) -> List[str]:
    """Append the trackers ``names`` to ``cfg.visualizer.vis_backends`` (a config's own backend of a tracker is kept,
    not doubled; without a visualizer, mmengine's default one with its LocalVisBackend is written out first).
    Returns the problems: one line per tracker whose package is missing, and then nothing is changed."""
    names = list(dict.fromkeys(names))  # --vis-backend wandb twice: one W&B run
    problems = [p for p in map(missing_tracker, names) if p]
    if problems or not names:
        return problems
    visualizer = cfg.get('visualizer') or dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')])
    backends = list(visualizer.get('vis_backends') or [dict(type='LocalVisBackend')])  # scalars.json, always
    have = {str(b.get('type', '')).split('.')[-1] for b in backends}
    run_name = osp.normpath(cfg.work_dir)
    backends += [tracker_backend(n, run_name) for n in names if TRACKERS[n][0] not in have]
    visualizer['vis_backends'] = backends
    cfg.visualizer = visualizer
    return []
