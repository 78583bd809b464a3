"""``RunIdentityHook``: a training run is one run from its first iteration to its ``result.json``, and a resume
continues it or is refused.

* **Identity.** A fresh training draws a run id; every runner checkpoint carries it in ``meta['vitbench_run']``,
  with whether the checkpoint is the training's final one (its epoch / iteration is the end of the schedule) and
  what defines the experiment (:func:`defining_config`, as JSON text). A resumed run takes the id of the checkpoint
  it resumes; ``result.json`` records ``run: {kind: 'training', id}`` (``harness/experiment/result_record.py``),
  and ``tools/test.py``'s record names the checkpoint it scored with that checkpoint's run id and final flag.
* **Resume is the same run or is refused.** mmengine's resume restores the optimizer's state, the schedulers and
  the seed from the checkpoint: a ``--resume`` whose config changed a learning rate trained with the old one while
  the dumped config and ``result.json`` said the new one. Resuming from a checkpoint whose saved defining config
  differs from the run's now stops before any iteration, in one line naming each changed key with the saved and
  the new value (exit status 2). What may change: where and how the run is logged, checkpointed, validated and
  launched (:data:`NOT_DEFINING`), which changes no weight, and the length of its loop (``train_cfg.max_iters`` /
  ``max_epochs``) where every ``param_scheduler`` sets its own ``end``: the schedulers, which the checkpoint
  restores, are checked, so a run resumed to train longer (or less) goes exactly as a fresh run of the new length
  would. (A scheduler without ``end`` ends with the loop, mmengine's default: then the length is the run's.)
  The number of processes is part of the run too: a training's global batch is ``batch_size`` per process times
  them, so a run resumed on another number (a Slurm job requeued on fewer GPUs) is refused the same way, naming
  ``world_size``. A checkpoint written before vitbench saved its config (no ``meta['vitbench_run']``) resumes with
  a warning that it cannot be checked.
"""
import json
import sys
import uuid
from typing import Dict, List, Optional

from mmengine.dist import get_world_size
from mmengine.hooks import Hook
from mmengine.runner import EpochBasedTrainLoop

from vitbench.compat.mmengine import built_train_loop, resumes
from vitbench.registry import HOOKS

CHECKPOINT_KEY = 'vitbench_run'  # in a runner checkpoint's meta: {'id', 'final', 'world_size', 'config'}

# Keys (and every key under them) whose change does not change what a training computes: where it writes, what
# it logs and shows, how often it saves and validates, how its data is loaded and the processes started. Anything
# else (model, data and its augmentation, optimizer, schedules, seed, precision, hooks, experiment) defines the run.
NOT_DEFINING = ('work_dir', 'launcher', 'resume', 'load_from', 'log_level', 'log_processor', 'visualizer',
                'vis_backends', 'env_cfg', 'model_wrapper_cfg', 'compile', 'custom_imports', 'filename',
                'default_hooks.logger', 'default_hooks.checkpoint', 'default_hooks.timer',
                'default_hooks.visualization', 'train_cfg.val_interval', 'train_cfg.val_begin',
                'train_cfg.max_iters', 'train_cfg.max_epochs',
                'train_dataloader.num_workers', 'train_dataloader.persistent_workers', 'train_dataloader.pin_memory',
                'train_dataloader.prefetch_factor', 'val_dataloader', 'val_evaluator', 'val_cfg', 'test_dataloader',
                'test_evaluator', 'test_cfg', 'optim_wrapper.optimizer.fused',
                'experiment.options',  # the --cfg-options that changed the experiment: their keys are compared
                'experiment.pretrain.epochs')  # the recorded length: it follows train_cfg's (the rule below)


_ADDED = ('vitbench.RunStateHook', 'vitbench.DivergenceHook', 'vitbench.ResultRecorderHook', 'vitbench.ParamTableHook',
          'vitbench.RunIdentityHook')  # what build_runner appends (harness/experiment/cli.py)


def _not_defining(key: str) -> bool:
    return any(key == k or key.startswith(k + '.') for k in NOT_DEFINING)


def _flatten(value, prefix: str, out: Dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for key, child in value.items():
            _flatten(child, f'{prefix}{key}.', out)
    elif not _not_defining(prefix[:-1]):
        out[prefix[:-1]] = json.dumps(value, sort_keys=True, default=_by_name)


def _by_name(value) -> str:
    """What JSON cannot write (a class or function of a lazy-import config): its name, the same in every process,
    never its repr, which may hold its address."""
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__qualname__)}"


def defining_config(cfg) -> Dict[str, str]:
    """``{dotted key: JSON of its value}`` of what defines the training ``cfg`` runs (every key but
    :data:`NOT_DEFINING`)."""
    out: Dict[str, str] = {}
    config = cfg.to_dict() if hasattr(cfg, 'to_dict') else dict(cfg)
    # the hooks build_runner adds to every run are not the config's (another vitbench adds others); a config's
    # own listing of one, with its arguments, is
    config['custom_hooks'] = [h for h in config.get('custom_hooks') or []
                              if not (isinstance(h, dict) and set(h) == {'type'} and h['type'] in _ADDED)]
    _flatten(config, '', out)
    if not _schedulers_end_by_themselves(config.get('param_scheduler')):
        train_cfg = config.get('train_cfg') or {}
        out.update({f'train_cfg.{k}': json.dumps(train_cfg[k]) for k in _LENGTH if k in train_cfg})
        epochs = ((config.get('experiment') or {}).get('pretrain') or {}).get('epochs')
        if epochs is not None:
            out['experiment.pretrain.epochs'] = json.dumps(epochs)
    return out


_LENGTH = ('max_iters', 'max_epochs')


def _schedulers_end_by_themselves(schedulers) -> bool:
    """Every scheduler names its ``end``: none takes the loop's length (mmengine's default for a missing one)."""
    if isinstance(schedulers, dict) and 'type' not in schedulers:  # one list per optimizer
        return all(_schedulers_end_by_themselves(v) for v in schedulers.values())
    schedulers = schedulers if isinstance(schedulers, (list, tuple)) else [schedulers] if schedulers else []
    return all(isinstance(s, dict) and 'end' in s for s in schedulers)


def changed_keys(saved: Dict[str, str], now: Dict[str, str]) -> List[str]:
    """'optim_wrapper.optimizer.lr 0.001 -> 0.005' for each key whose value differs (absent: 'unset')."""
    return [f"{key} {saved.get(key, 'unset')} -> {now.get(key, 'unset')}"
            for key in sorted(set(saved) | set(now)) if saved.get(key) != now.get(key)]


def is_final(runner, meta: dict) -> bool:
    """The checkpoint being saved (its ``meta``, as mmengine fills it) is the end of the training's schedule."""
    loop = built_train_loop(runner)
    if loop is None:
        return False
    if isinstance(loop, EpochBasedTrainLoop):
        return int(meta.get('epoch', -1)) >= loop.max_epochs
    return int(meta.get('iter', -1)) >= loop.max_iters


def _refuse(message: str) -> None:
    print(f'error: {message}', file=sys.stderr)  # one line, exit status 2, as the tools' ConfigError
    raise SystemExit(2)


@HOOKS.register_module()
class RunIdentityHook(Hook):
    """Added to every run by ``build_runner`` (``harness/experiment/cli.py``)."""

    priority = 'VERY_HIGH'  # refuses a changed resume before the other hooks take the checkpoint's state

    def __init__(self):
        self.run_id: Optional[str] = None

    def before_run(self, runner) -> None:
        self.run_id = uuid.uuid4().hex[:16]  # a resume replaces it with the checkpoint's

    def after_load_checkpoint(self, runner, checkpoint) -> None:
        if not resumes(runner):
            return  # load_from: weights only, a new run that starts from them
        meta = checkpoint.get('meta') or {}
        saved = meta.get(CHECKPOINT_KEY)
        if not isinstance(saved, dict) or not isinstance(saved.get('config'), str):
            runner.logger.warning('--resume: the checkpoint does not record its run\'s config (written by an older '
                                  'vitbench): whether this run changed it cannot be checked')
            return
        changed = changed_keys(json.loads(saved['config']), defining_config(runner.cfg))
        if saved.get('world_size', get_world_size()) != get_world_size():  # absent: saved before it was recorded
            changed.append(f"world_size {saved['world_size']} -> {get_world_size()}")
        if changed:
            _refuse(f"--resume: this run's config changes what defines the run it resumes: {'; '.join(changed)} "
                    '(saved -> now). Resume with the saved values, or start a new run in another --work-dir')
        if isinstance(saved.get('id'), str):
            self.run_id = saved['id']

    def before_save_checkpoint(self, runner, checkpoint) -> None:
        meta = checkpoint.setdefault('meta', {})
        meta[CHECKPOINT_KEY] = dict(id=self.run_id, final=is_final(runner, meta), world_size=get_world_size(),
                                    config=json.dumps(defining_config(runner.cfg), sort_keys=True))


def run_id_of(runner) -> Optional[str]:
    for hook in runner.hooks:
        if isinstance(hook, RunIdentityHook):
            return hook.run_id
    return None
