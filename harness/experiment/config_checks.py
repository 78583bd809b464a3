"""Checks of a loaded config before anything is built or computed: mistakes that mmengine would accept silently
(a top-level ``--cfg-options`` key nothing reads, an ``experiment`` key nothing reads, a checkpoint hook's
``intervl``) or only report with a traceback after minutes of start-up (an argument typo in any section, a batch
size below 1, a warm-up longer than the run, an image size the patch size does not divide).

Every ``type``d dict of the sections the Runner builds (dataloaders and their dataset and sampler, optim_wrapper
and its optimizer, param_scheduler, default_hooks and custom_hooks, model and its typed parts, train_cfg / val_cfg
/ test_cfg) is checked against the ``__init__`` of the class its registry builds it into (:func:`accepted_args`,
which follows ``**kwargs`` to the parent class when ``__init__`` passes them to ``super().__init__``).

:func:`config_problems` returns one line per problem, each naming the key and the fix; ``load_config`` of
:mod:`harness.experiment.cli` turns them into a ConfigError (exit status 2 in the tools).
"""
import difflib
import inspect
import numbers
import re
from typing import Iterable, List, Optional

import torch
from mmengine.dataset import InfiniteSampler
from mmengine.registry import (DATA_SAMPLERS, DATASETS, HOOKS, LOOPS, MODELS, OPTIM_WRAPPER_CONSTRUCTORS,
                               OPTIM_WRAPPERS, OPTIMIZERS, PARAM_SCHEDULERS)
from mmengine.runner import Runner
from torch.utils.data import DataLoader

from backbones.variants import VARIANTS

from .protocol import ProtocolError, protocol_of

# Top-level keys something reads although a config need not set them: the Runner's arguments, the keys mmengine
# reads from the config itself, and vitbench's own (cli.py, tools/test.py --tta, result_record.py, test_crop.py).
_READ_BY_MMENGINE = ('compile', 'model_wrapper_cfg', 'activation_checkpointing', 'efficient_conv_bn_eval',
                     'find_unused_parameters', 'sync_bn', 'runner_type', 'custom_imports')
_READ_BY_VITBENCH = ('experiment', 'tta_model', 'tta_pipeline', 'ema',  # ema: harness/experiment/cli.py
                     'test_crop_ratio', 'test_img_size')  # harness/experiment/test_crop.py
# What the experiment dict may hold: the keys result_record.py and pretrain/export.py (origin_of) read, and
# those of its ``pretrain`` (the leaderboard also reads ``finetune``). Anything else is a typo nothing reads.
EXPERIMENT_KEYS = ('task', 'dataset', 'backbone', 'backbone_overrides', 'pretrain', 'eval', 'checkpoint', 'protocol',
                   'options')  # options: the --cfg-options that changed the experiment (cli.py)
PRETRAIN_KEYS = ('recipe', 'epochs', 'checkpoint', 'finetune', 'data', 'tokenizer')  # data, tokenizer: pretraining_of
_LOOPS = (('train_cfg', None), ('val_cfg', 'ValLoop'), ('test_cfg', 'TestLoop'))
_LOOP_DEFAULT_ARGS = ('self', 'runner', 'dataloader', 'evaluator')  # what the Runner passes itself


def config_problems(cfg, options: dict, keys_before: Iterable[str]) -> List[str]:
    """Every problem of ``cfg``; ``options`` are the ``--cfg-options`` merged into it, ``keys_before`` its
    top-level keys before that merge."""
    return [*_unknown_top_level(cfg, options, set(keys_before)), *_unknown_experiment_keys(cfg),
            *_protocol(cfg), *_unknown_loop_keys(cfg), *_unknown_arguments(cfg), *_batch_sizes(cfg),
            *_warmups_longer_than_the_run(cfg), *_patch_size_divides_img_size(cfg)]


def _protocol(cfg) -> List[str]:
    """A malformed ``experiment.protocol``, or one fixing a key the config lacks: said before the run starts."""
    try:
        protocol_of(cfg)
    except ProtocolError as e:
        return [str(e)]
    return []


def _did_you_mean(word: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(candidates), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ''


def _nested_keys(value, prefix=''):
    """'train_cfg.max_iters', ... for every key of the nested dicts in ``value``."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield f'{prefix}{key}'
            yield from _nested_keys(child, f'{prefix}{key}.')


def _unknown_top_level(cfg, options: dict, keys_before: set) -> List[str]:
    """A top-level key that nothing reads: mmengine merges it and ignores it. Either the config never had it
    (``--cfg-options max_iters=2`` would run the whole schedule), or it is one of the config's own variables,
    which the config read when it was parsed (``max_epochs = 40`` went into ``train_cfg`` and the schedulers then:
    ``--cfg-options max_epochs=2`` would log 2 and train 40)."""
    read = set(inspect.signature(Runner.__init__).parameters) | {*_READ_BY_MMENGINE, *_READ_BY_VITBENCH}
    problems = []
    for option in options:
        key = option.split('.')[0]
        if key in read:
            continue
        nested = [k for k in _nested_keys(cfg.to_dict()) if k.endswith(f'.{option}')]
        if key in keys_before:
            where = f"; set what it went into, e.g. '{nested[0]}'" if nested else ''
            problems.append(f"--cfg-options {option}: '{key}' is a variable of {cfg.filename}, read when the config "
                            f'was parsed and by nothing after, so it would be ignored{where}')
            continue
        hint = f" (did you mean '{nested[0]}'?)" if nested else _did_you_mean(key, read | keys_before)
        problems.append(f"--cfg-options {option}: '{key}' is not a key of {cfg.filename} and nothing reads it, so "
                        f'it would be ignored{hint}')
    return problems


def _unknown_experiment_keys(cfg) -> List[str]:
    experiment = cfg.get('experiment')
    if not isinstance(experiment, dict):
        return []
    problems = [f"experiment.{k}: not an experiment key (known: {', '.join(EXPERIMENT_KEYS)})"
                f'{_did_you_mean(k, EXPERIMENT_KEYS)}' for k in experiment if k not in EXPERIMENT_KEYS]
    pretrain = experiment.get('pretrain')
    if isinstance(pretrain, dict):
        problems += [f"experiment.pretrain.{k}: not a key of experiment.pretrain (known: {', '.join(PRETRAIN_KEYS)})"
                     f'{_did_you_mean(k, PRETRAIN_KEYS)}' for k in pretrain if k not in PRETRAIN_KEYS]
    return problems


def _loop_class(key: str, loop: dict, default: Optional[str]):
    """The class mmengine's Runner builds ``loop`` into (None when it cannot be told without building)."""
    if 'type' in loop:
        name = loop['type']
    elif key == 'train_cfg':
        name = 'EpochBasedTrainLoop' if loop.get('by_epoch') else 'IterBasedTrainLoop'
    else:
        name = default
    if not isinstance(name, str):
        return name if inspect.isclass(name) else None
    try:
        return LOOPS.get(name)
    except Exception:  # noqa: BLE001 - a scope that cannot be imported here; the Runner will say so
        return None


def _unknown_loop_keys(cfg) -> List[str]:
    """``train_cfg.max_iter`` (a typo) only fails when training starts, as a TypeError deep in mmengine."""
    problems = []
    for key, default in _LOOPS:
        loop = cfg.get(key)
        if not isinstance(loop, dict):
            continue
        cls = _loop_class(key, loop, default)
        if cls is None:
            continue
        params = inspect.signature(cls.__init__).parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            continue  # takes anything
        allowed = [p for p in params if p not in _LOOP_DEFAULT_ARGS] + ['type' if 'type' in loop else 'by_epoch']
        problems += [f"{key}.{k}: not an argument of {cls.__name__} (it takes {', '.join(allowed)})"
                     f'{_did_you_mean(k, allowed)}' for k in loop if k not in allowed]
    return problems


# Keys the Runner takes out of a dataloader dict before the rest goes to torch's DataLoader (Runner.build_dataloader)
_DATALOADER_KEYS = ('dataset', 'sampler', 'batch_sampler', 'collate_fn', 'worker_init_fn', 'num_batch_per_epoch')
# Keys mmengine's build_optim_wrapper takes out of optim_wrapper for the optimizer constructor
_OPTIM_WRAPPER_KEYS = ('type', 'constructor', 'paramwise_cfg')
_MODEL_PARTS = ('backbone', 'neck', 'head', 'decode_head', 'auxiliary_head', 'data_preprocessor')
_ANY = None  # accepted_args: the class takes any keyword
# The Runner's default hooks: a default_hooks entry without a type updates these (Runner.register_default_hooks)
_DEFAULT_HOOKS = dict(runtime_info='RuntimeInfoHook', timer='IterTimerHook', sampler_seed='DistSamplerSeedHook',
                      logger='LoggerHook', param_scheduler='ParamSchedulerHook', checkpoint='CheckpointHook')


def _forwards_to_super(init, varkw: str) -> bool:
    try:
        source = inspect.getsource(init)
    except (OSError, TypeError):
        return False
    return re.search(r'super\([^)]*\)\.__init__\((?:[^()]|\([^()]*\))*\*\*' + varkw + r'\b', source) is not None


def accepted_args(cls) -> Optional[set]:
    """The keyword arguments ``cls(...)`` takes (a function: its parameters); None when it takes any. ``**kwargs``
    passed on to ``super().__init__`` are the parent's arguments; torch's Module and ``object`` take none."""
    if not inspect.isclass(cls):
        try:
            params = inspect.signature(cls).parameters.values()
        except (TypeError, ValueError):
            return _ANY
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
            return _ANY
        return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    names = set()
    for klass in cls.__mro__:
        if klass in (object, torch.nn.Module):
            return names
        init = klass.__dict__.get('__init__')
        if init is None:
            continue
        try:
            params = list(inspect.signature(init).parameters.values())[1:]  # self
        except (TypeError, ValueError):
            return _ANY
        names |= {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        varkw = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
        if varkw is None:
            return names
        if not _forwards_to_super(init, varkw):
            return _ANY  # kept, or passed elsewhere: cannot be told here
    return names


def _resolve(registry, type_, scope):
    """The class (or function) ``registry`` builds ``type_`` into under the config's default scope; None when it
    cannot be told here (the build will say so)."""
    if not isinstance(type_, str):
        return type_ if callable(type_) else None
    try:
        with registry.switch_scope_and_registry(scope) as reg:
            return reg.get(type_)
    except Exception:  # noqa: BLE001 - a scope or module that cannot be imported here
        return None


def _argument_problems(where: str, value, registry, scope, extra=(), default_type=None) -> List[str]:
    """Keys of the dict ``value`` (at ``where``) that the class its ``type`` names does not take."""
    if not isinstance(value, dict):
        return []
    type_ = value.get('type', default_type)
    cls = _resolve(registry, type_, value.get('_scope_', scope)) if type_ is not None else None
    if cls is None:
        return []
    allowed = accepted_args(cls)
    if cls is _checkpoint_hook_class():  # its **kwargs go to Runner.save_checkpoint, at the first save
        allowed = set(inspect.signature(cls.__init__).parameters) | set(
            inspect.signature(Runner.save_checkpoint).parameters)
    if allowed is _ANY:
        return []
    allowed = (allowed | {'type', '_scope_', *extra}) - {'self'}
    name = getattr(cls, '__name__', str(type_))
    return [f'{where}.{k}: not an argument of {name}{_did_you_mean(k, allowed) or _it_takes(allowed)}'
            for k in value if isinstance(k, str) and k not in allowed]


def _it_takes(allowed, most: int = 16) -> str:
    shown = sorted(k for k in allowed if not k.startswith('_'))
    return f" (it takes {', '.join(shown[:most])}{', ...' if len(shown) > most else ''})"


def _checkpoint_hook_class():
    from mmengine.hooks import CheckpointHook  # late: mmengine.hooks imports the runner's modules
    return CheckpointHook


def _builds_default_wrapper(wrapper: dict, scope) -> bool:
    """Whether ``wrapper`` goes to mmengine's DefaultOptimWrapperConstructor.__call__ (e.g. the layer-decay
    constructor, which only reads paramwise_cfg); a constructor with a __call__ of its own may read other keys."""
    from mmengine.optim import DefaultOptimWrapperConstructor
    constructor = _resolve(OPTIM_WRAPPER_CONSTRUCTORS, wrapper.get('constructor', 'DefaultOptimWrapperConstructor'),
                           scope)
    return inspect.isclass(constructor) and issubclass(constructor, DefaultOptimWrapperConstructor) and \
        constructor.__call__ is DefaultOptimWrapperConstructor.__call__


def _unknown_arguments(cfg) -> List[str]:
    """``train_dataloader.batchsize``, ``optim_wrapper.optimiser``, ``default_hooks.checkpoint.intervl``: a key
    that the class it goes to does not take. mmengine raises a TypeError deep in the build for most (after the
    datasets are read), and the checkpoint hook keeps unknown keys for its first save, after a whole epoch."""
    scope, problems = cfg.get('default_scope'), []
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(key)
        if not isinstance(loader, dict):
            continue
        allowed = set(inspect.signature(DataLoader.__init__).parameters) - {'self'} | set(_DATALOADER_KEYS)
        problems += [f"{key}.{k}: not an argument of torch's DataLoader nor a key mmengine's Runner reads"
                     f'{_did_you_mean(k, allowed) or _it_takes(allowed, most=len(allowed))}'
                     for k in loader if k not in allowed]
        problems += _argument_problems(f'{key}.dataset', loader.get('dataset'), DATASETS, scope)
        problems += _argument_problems(f'{key}.sampler', loader.get('sampler'), DATA_SAMPLERS, scope,
                                       extra=('dataset',))
    wrapper = cfg.get('optim_wrapper')
    if isinstance(wrapper, dict) and 'optimizer' in wrapper and _builds_default_wrapper(wrapper, scope):
        problems += _argument_problems('optim_wrapper', wrapper, OPTIM_WRAPPERS, scope, extra=_OPTIM_WRAPPER_KEYS,
                                       default_type='OptimWrapper')
    if isinstance(wrapper, dict):
        problems += _argument_problems('optim_wrapper.optimizer', wrapper.get('optimizer'), OPTIMIZERS, scope,
                                       extra=('params',))
    schedulers = cfg.get('param_scheduler')
    for i, scheduler in enumerate(schedulers if isinstance(schedulers, (list, tuple)) else [schedulers]):
        where = f'param_scheduler.{i}' if isinstance(schedulers, (list, tuple)) else 'param_scheduler'
        problems += _argument_problems(where, scheduler, PARAM_SCHEDULERS, scope, extra=('convert_to_iter_based',))
    for name, hook in (cfg.get('default_hooks') or {}).items():
        problems += _argument_problems(f'default_hooks.{name}', hook, HOOKS, scope,
                                       default_type=_DEFAULT_HOOKS.get(name))
    for i, hook in enumerate(cfg.get('custom_hooks') or []):
        problems += _argument_problems(f'custom_hooks.{i}', hook, HOOKS, scope)
    model = cfg.get('model')
    problems += _argument_problems('model', model, MODELS, scope)
    for part in _MODEL_PARTS:
        if isinstance(model, dict):
            problems += _argument_problems(f'model.{part}', model.get(part), MODELS, scope)
    return problems


def _patch_size_divides_img_size(cfg) -> List[str]:
    """A ViT's image size that its patch size does not divide fails at the first forward, after the data."""
    backbone = (cfg.get('model') or {}).get('backbone')
    if not isinstance(backbone, dict):
        return []
    arch = backbone.get('arch')
    variant = (VARIANTS.get(arch) or {}).get('kwargs', {}) if isinstance(arch, str) else {}
    patch, size = backbone.get('patch_size', variant.get('patch_size')), backbone.get('img_size')
    if not isinstance(patch, int) or patch <= 0 or size is None:
        return []
    sizes = list(size) if isinstance(size, (list, tuple)) else [size]
    if all(isinstance(s, int) and s % patch == 0 for s in sizes):
        return []
    nearest = max(patch, sizes[0] // patch * patch) if isinstance(sizes[0], int) else patch
    return [f'model.backbone.img_size is {size!r}: the patch size of {backbone.get("arch") or backbone.get("type")} '
            f'is {patch}, which must divide it (e.g. {nearest})']


def _batch_sizes(cfg) -> List[str]:
    problems = []
    for key in ('train_dataloader', 'val_dataloader', 'test_dataloader'):
        loader = cfg.get(key)
        size = loader.get('batch_size') if isinstance(loader, dict) else None
        if size is not None and not (isinstance(size, int) and not isinstance(size, bool) and size >= 1):
            problems.append(f'{key}.batch_size is {size!r}: expected a whole number >= 1 (images per process)')
    return problems


def _run_length(cfg):
    """(by_epoch, 'train_cfg.max_epochs' or 'train_cfg.max_iters', length) of the training loop, or None."""
    loop = cfg.get('train_cfg')
    if not isinstance(loop, dict):
        return None
    if 'by_epoch' in loop:
        by_epoch = bool(loop['by_epoch'])
    elif loop.get('type') in ('EpochBasedTrainLoop', 'IterBasedTrainLoop'):
        by_epoch = loop['type'] == 'EpochBasedTrainLoop'
    else:
        return None  # a custom loop: its unit is its own
    key = 'max_epochs' if by_epoch else 'max_iters'
    length = loop.get(key)
    return (by_epoch, f'train_cfg.{key}', length) if isinstance(length, numbers.Real) else None


def _warmups_longer_than_the_run(cfg) -> List[str]:
    """A warm-up (a scheduler that ends before the schedule's last one does) that ends after the run: the
    learning rate never reaches its base value, typically after shortening ``train_cfg`` alone. Compared in the
    unit both count in (epochs or iterations); a scheduler counting in the other unit is not checked."""
    run = _run_length(cfg)
    schedulers = cfg.get('param_scheduler')
    schedulers = [schedulers] if isinstance(schedulers, dict) else schedulers
    if run is None or not isinstance(schedulers, list):
        return []
    by_epoch, length_key, length = run
    unit = 'epoch' if by_epoch else 'iteration'
    ends = [s.get('end', float('inf')) if isinstance(s, dict) else float('inf') for s in schedulers]
    ends = [float('inf') if e is None else e for e in ends]
    problems = []
    for i, (scheduler, end) in enumerate(zip(schedulers, ends)):
        if not isinstance(scheduler, dict) or bool(scheduler.get('by_epoch', True)) != by_epoch:
            continue  # mmengine's schedulers count epochs unless told otherwise
        if end < max(ends) and end > length:
            problems.append(f'param_scheduler.{i} ({scheduler.get("type")}) warms up until {unit} {end}, longer than '
                            f'the run ({length_key}={length}): shorten it (--cfg-options param_scheduler.{i}.end=N, '
                            f'and the begin of the scheduler that follows it) or train longer')
    return problems


def training_problems(cfg) -> List[str]:
    """What makes ``cfg`` unfit to *train* (tools/train.py; tools/test.py evaluates any of them): a learning rate
    that is not positive would leave the weights as they are, and the run would record them as trained."""
    optimizer = (cfg.get('optim_wrapper') or {}).get('optimizer') or {}
    lr = optimizer.get('lr') if isinstance(optimizer, dict) else None
    if isinstance(lr, numbers.Real) and not isinstance(lr, bool) and lr <= 0:
        return [f'optim_wrapper.optimizer.lr is {lr}: nothing would train, and the untrained weights would be recorded '
                "as trained; expected > 0. A linear probe of a frozen backbone is model.trainable='linear' (only the "
                'head trains); evaluating weights as they are is tools/test.py']
    return []


def empty_epoch_problem(loader, key: str = 'train_dataloader') -> Optional[str]:
    """A built training dataloader that yields no batch an epoch: mmengine would train 0 iterations and record the
    result, or stop on an assertion that names neither the batch nor the dataset size. (An endless sampler, as
    iteration-based configs may use, has no epoch to be empty.)"""
    if isinstance(getattr(loader, 'sampler', None), InfiniteSampler) or len(loader) > 0:
        return None
    size, batch = len(loader.dataset), loader.batch_size
    if size == 0:
        return f'{key}: its dataset ({type(loader.dataset).__name__}) holds no samples'
    return (f'{key}: {size} samples in batches of {batch} with drop_last=True make no batch an epoch (per process); '
            f'lower {key}.batch_size to at most {size} or set {key}.drop_last=False')
