"""What an ImageNet config trains with, in the papers' vocabulary, and the audit of configs against the values
the papers and the official commands state.

:func:`hyperparameters` reads a loaded mmengine config (nothing is built) into :data:`KEYS`: ``lr``,
``weight_decay``, ``batch`` (the total batch the learning rate is for), ``epochs``, ``warmup_epochs``,
``drop_path``, ``mixup``, ``cutmix``, ``label_smoothing``, ``loss``, ``crop_ratio``, ``input_size``,
``repeated_aug``, ... Values a config leaves out are the ones the code then uses (the variant's table entry, the
constructor defaults), so that what is compared is what would run.

An audit table (``tests/recipe_audit/*.yaml``) maps a config to the values its sources state, grouped by source::

    configs/pretrain/deit3_base_in1k_400e.py:
      - source: 'thesis Table 6.1, column "Ours IN-1k"'
        optimizer: lamb
        lr: 3.0e-3
        batch: 2048
      - source: thesis Table 6.14 (IN-1k, 400 epochs)
        drop_path: 0.1
      - source: official models_v2.py (deit_base_patch16_LS)
        model.backbone.arch: deit3_base_patch16_224   # any dotted path of the config (list items by index)

Every value cites its source; a key two sources of one config state must agree. :func:`audit` returns one
line per value the config does not match.
"""
import inspect
import math
import numbers
import os.path as osp
from typing import Any, Dict, List, Tuple

from vitbench.yaml_file import read_yaml

_MISSING = object()  # lookup(): no default, raise


class _Absent:
    def __repr__(self):
        return 'absent'


_ABSENT = _Absent()  # audit(): a dotted path the config does not have

# key -> what it is read from; the docs of the audit table
KEYS = {
    'optimizer': 'optim_wrapper.optimizer.type, lower case (lamb, adamw, sgd, lars)',
    'lr': 'optim_wrapper.optimizer.lr: the rate at `batch` (DeiT: 5e-4 x batch / 512)',
    'weight_decay': 'optim_wrapper.optimizer.weight_decay',
    'betas': 'optim_wrapper.optimizer.betas (Adam family), a list',
    'grad_clip': 'max gradient norm: optim_wrapper.clip_grad.max_norm, else LAMB\'s own max_grad_norm (timm: 1.0); '
                 'null: none',
    'layer_decay': 'paramwise_cfg.layer_decay_rate (1.0: none)',
    'batch': 'auto_scale_lr.base_batch_size: the total batch over all GPUs the lr is for',
    'epochs': 'train_cfg.max_epochs',
    'warmup_epochs': 'end of the warm-up scheduler (a LinearLR from epoch 0, followed by another); 0: none',
    'schedule': 'the scheduler after the warm-up: cosine, step, poly, linear, constant',
    'min_lr': 'eta_min of the cosine schedule',
    'variant': 'model.backbone.arch',
    'img_size': "the backbone's resolution (override, else the variant's)",
    'drop_path': "model.backbone.drop_path_rate, else the variant's, else the class default",
    'layer_scale': "LayerScale init: model.backbone.init_values, else the variant's (null: no LayerScale)",
    'trainable': "model.trainable: all, attention, ffn, linear (fine-tuning)",
    'loss': 'model.loss.kind: ce or bce',
    'label_smoothing': 'model.loss.label_smoothing (0: none)',
    'mixup': 'data_preprocessor.mixup_alpha (0: off)',
    'cutmix': 'data_preprocessor.cutmix_alpha (0: off)',
    'random_erasing': 'data_preprocessor.erase_prob (0: off)',
    'train_crop': "the training crop transform's type (RandomResizedCrop, SimpleRandomCrop; a TrainCrop's kind "
                  "as the one of these it builds)",
    'input_size': "the training crop's size",
    'crop_scale': 'RandomResizedCrop scale, a list',
    'hflip': 'a RandomHorizontalFlip of prob > 0 in the training pipeline',
    'rand_augment': "RandAugment's config_str (null: none)",
    'auto_augment': "AutoAugment's config_str (null: none)",
    'augment_policy': 'the policy step of the training pipeline: three_augment, rand_augment, auto_augment, '
                      'trivial_augment (null: none)',
    'three_augment': 'a ThreeAugment with at least one operation in the training pipeline',
    'three_augment_ops': "ThreeAugment's ops, a list (null: no ThreeAugment)",
    'color_jitter': 'ColorJitter strength (0: none)',
    'repeated_aug': 'the training sampler is RepeatAugSampler',
    'test_size': "the test pipeline's ResizeCenterCrop size",
    'crop_ratio': "the test pipeline's ResizeCenterCrop crop_pct",
    'distillation': 'model.distillation.kind: hard or soft (null: none)',
    'distill_alpha': 'weight of the distillation term (lambda); default by kind as ImageClassifier',
    'distill_tau': 'soft distillation temperature; default as ImageClassifier',
    'distill_inference': 'model.distill_inference: how two heads score (softmax_sum, logit_mean)',
    'teacher': 'model.distillation.teacher: its name (timm) or arch',
    # the switches of the DeiT ablation (thesis Table 3.8; configs/_base_/imagenet_deit_300e.py)
    'aug_repeats': "repeats of each image per epoch: the RepeatAugSampler's num_repeats (1: none)",
    'dropout': "model.backbone.proj_drop_rate (after attention projection and MLP), else the variant's",
    'ema': 'the EMA momentum (1 - decay) of the weights when ema.enabled (null: no EMA)',
}
# ImageClassifier's defaults for what a config leaves out (tests/test_recipe_audit.py checks them against it)
CLASSIFIER_DEFAULTS = dict(loss='ce', label_smoothing=0.0, trainable='all', distill_inference='softmax_sum',
                           distill_alpha={'hard': 0.5, 'soft': 0.1}, distill_tau=3.0)
_POLICIES = {'ThreeAugment': 'three_augment', 'RandAugment': 'rand_augment', 'AutoAugment': 'auto_augment',
             'TrivialAugment': 'trivial_augment'}
_TRAIN_CROP_KINDS = {'rrc': 'RandomResizedCrop', 'src': 'SimpleRandomCrop'}  # pretrain.transforms.TrainCrop.KINDS
_SCHEDULES = {'CosineAnnealingLR': 'cosine', 'MultiStepLR': 'step', 'StepLR': 'step', 'PolyLR': 'poly',
              'LinearLR': 'linear', 'ConstantLR': 'constant'}


class AuditError(ValueError):
    """An audit table that cannot be read; the message names the file, the config and the key."""


# ---------------------------------------------------------------------------------------------- reading a config

def _as_dict(cfg):
    """A loaded mmengine ``Config`` as plain dicts and lists (a dict stays as it is)."""
    return cfg.to_dict() if hasattr(cfg, 'to_dict') else cfg


def lookup(cfg, path: str, default=_MISSING):
    """``cfg['a']['b'][2]['c']`` for 'a.b.2.c'; ``default`` (else a KeyError naming the path) when absent."""
    node = _as_dict(cfg)
    for part in path.split('.'):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.lstrip('-').isdigit() and -len(node) <= int(part) < len(node):
            node = node[int(part)]
        else:
            if default is _MISSING:
                raise KeyError(f"'{path}' is not in the config (no '{part}')")
            return default
    return node


def _plain(value):
    """Config containers as plain lists / dicts, for comparison and printing."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _pipeline(cfg, loader: str) -> List[dict]:
    dataset = lookup(cfg, f'{loader}.dataset', {}) or {}
    while isinstance(dataset, dict) and 'pipeline' not in dataset and isinstance(dataset.get('dataset'), dict):
        dataset = dataset['dataset']  # a wrapper (RepeatDataset, ...)
    return list(dataset.get('pipeline') or []) if isinstance(dataset, dict) else []


def _first(pipeline: List[dict], *types: str) -> dict:
    return next((t for t in pipeline if isinstance(t, dict) and t.get('type') in types), {})


def _backbone_defaults(arch) -> Dict[str, Any]:
    """The constructor arguments the variant sets, over the class defaults."""
    from backbones.factory import get_variant, model_class_of
    from backbones.timm_backbones import is_timm_name
    if not isinstance(arch, str) or is_timm_name(arch):  # timm's model (Grafit's ResNet-50): its own defaults
        return {}
    entry = get_variant(arch)
    params = inspect.signature(model_class_of(arch).__init__).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    return dict(defaults, **entry['kwargs'])


def _scheduler_summary(cfg) -> Dict[str, Any]:
    schedulers = lookup(cfg, 'param_scheduler', []) or []
    schedulers = [schedulers] if isinstance(schedulers, dict) else list(schedulers)
    warmup, main = 0, None
    if len(schedulers) >= 2 and schedulers[0].get('type') == 'LinearLR' and schedulers[0].get('begin', 0) == 0:
        first = schedulers[0]
        warmup = first.get('end') if first.get('by_epoch', True) else None
        main = schedulers[1]
    elif schedulers:
        main = schedulers[0]
    if main is None:
        return dict(warmup_epochs=warmup, schedule='constant', min_lr=None)
    kind = _SCHEDULES.get(main.get('type'), main.get('type'))
    return dict(warmup_epochs=warmup, schedule=kind, min_lr=main.get('eta_min') if kind == 'cosine' else None)


def _grad_clip(cfg, optimizer: dict):
    clip = lookup(cfg, 'optim_wrapper.clip_grad', None)
    if isinstance(clip, dict) and clip.get('max_norm') is not None:
        return clip['max_norm']
    if str(optimizer.get('type', '')).lower() == 'lamb':
        return optimizer.get('max_grad_norm', 1.0)  # timm's Lamb clips the global norm itself
    return None


def _distillation(cfg, model: dict) -> Dict[str, Any]:
    d = model.get('distillation')
    out = dict(distill_inference=model.get('distill_inference', CLASSIFIER_DEFAULTS['distill_inference']))
    if not isinstance(d, dict):
        return dict(out, distillation=None, distill_alpha=None, distill_tau=None, teacher=None)
    kind = d.get('kind', 'hard')
    teacher = d.get('teacher') or {}
    alpha = d.get('alpha')
    return dict(out, distillation=kind,
                distill_alpha=CLASSIFIER_DEFAULTS['distill_alpha'].get(kind) if alpha is None else alpha,
                distill_tau=d.get('tau', CLASSIFIER_DEFAULTS['distill_tau']),
                teacher=_teacher_name(teacher.get('name') or teacher.get('arch')))


def _teacher_name(name):
    """A timm teacher by its timm name, whichever way the config writes it (arch='timm:regnety_160', or the older
    source='timm', name='regnety_160')."""
    return name[len('timm:'):] if isinstance(name, str) and name.startswith('timm:') else name


def hyperparameters(cfg) -> Dict[str, Any]:
    """Every :data:`KEYS` entry of a loaded config (None where the config has no such thing, e.g. ``loss`` of
    MAE)."""
    cfg = _as_dict(cfg)
    model = lookup(cfg, 'model', {}) or {}
    backbone = dict(model.get('backbone') or {})
    arch = backbone.get('arch')
    variant = _backbone_defaults(arch)
    optimizer = lookup(cfg, 'optim_wrapper.optimizer', {}) or {}
    preprocessor = model.get('data_preprocessor') or {}
    classifier = model.get('type') == 'ImageClassifier'
    loss = model.get('loss') or {}
    train, test = _pipeline(cfg, 'train_dataloader'), _pipeline(cfg, 'val_dataloader')
    crop = next((t for t in train if isinstance(t, dict) and str(t.get('type', '')).endswith('Crop')), {})
    crop_type = _TRAIN_CROP_KINDS.get(crop.get('kind', 'rrc')) if crop.get('type') == 'TrainCrop' else crop.get('type')
    policy = next((t for t in train if isinstance(t, dict) and t.get('type') in _POLICIES), {})
    three = _first(train, 'ThreeAugment')
    three_ops = _plain(three.get('ops', ['grayscale', 'solarization', 'gaussian_blur'])) if three else None
    flip = _first(train, 'RandomHorizontalFlip')
    center = _first(test, 'ResizeCenterCrop')
    sampler = lookup(cfg, 'train_dataloader.sampler', {}) or {}
    values = dict(
        optimizer=str(optimizer['type']).lower() if optimizer.get('type') else None,
        lr=optimizer.get('lr'),
        weight_decay=optimizer.get('weight_decay', 0.0),
        betas=_plain(optimizer.get('betas')),
        grad_clip=_grad_clip(cfg, optimizer),
        layer_decay=lookup(cfg, 'optim_wrapper.paramwise_cfg.layer_decay_rate', None),
        batch=lookup(cfg, 'auto_scale_lr.base_batch_size', None),
        epochs=lookup(cfg, 'train_cfg.max_epochs', None),
        **_scheduler_summary(cfg),
        variant=arch,
        img_size=backbone.get('img_size', variant.get('img_size')),
        drop_path=backbone.get('drop_path_rate', variant.get('drop_path_rate')),
        layer_scale=backbone.get('init_values', variant.get('init_values')),
        trainable=model.get('trainable', CLASSIFIER_DEFAULTS['trainable']) if classifier else None,
        loss=loss.get('kind', CLASSIFIER_DEFAULTS['loss']) if classifier else None,
        label_smoothing=loss.get('label_smoothing', CLASSIFIER_DEFAULTS['label_smoothing']) if classifier else None,
        mixup=preprocessor.get('mixup_alpha', 0.0),
        cutmix=preprocessor.get('cutmix_alpha', 0.0),
        random_erasing=preprocessor.get('erase_prob', 0.0),
        train_crop=crop_type,
        input_size=crop.get('size'),
        crop_scale=_plain(crop.get('scale', [0.08, 1.0])) if crop_type == 'RandomResizedCrop' else None,
        hflip=bool(flip) and flip.get('prob', 0.5) > 0,
        rand_augment=_first(train, 'RandAugment').get('config_str', 'rand-m9-mstd0.5-inc1') if _first(
            train, 'RandAugment') else None,
        auto_augment=_first(train, 'AutoAugment').get('config_str', 'original') if _first(
            train, 'AutoAugment') else None,
        augment_policy=_POLICIES.get(policy.get('type')),
        three_augment=bool(three_ops),
        three_augment_ops=three_ops,
        color_jitter=_first(train, 'ColorJitter').get('strength', 0.0),
        repeated_aug=sampler.get('type') == 'RepeatAugSampler',
        test_size=center.get('size'),
        crop_ratio=center.get('crop_pct', 0.875) if center else None,
    )
    values.update(_distillation(cfg, model) if classifier else dict.fromkeys(
        ('distillation', 'distill_alpha', 'distill_tau', 'distill_inference', 'teacher')))
    values.update(_switches(cfg, backbone, variant))
    return values


def _switches(cfg: dict, backbone: dict, variant: dict) -> Dict[str, Any]:
    """The keys of the DeiT ablation switches that :func:`hyperparameters` reads apart from the others."""
    sampler = lookup(cfg, 'train_dataloader.sampler', {}) or {}
    repeats = sampler.get('num_repeats', 3) if sampler.get('type') == 'RepeatAugSampler' else 1
    ema = cfg.get('ema') or {}
    return dict(aug_repeats=repeats, dropout=backbone.get('proj_drop_rate', variant.get('proj_drop_rate', 0.0)),
                ema=ema.get('momentum') if ema.get('enabled') else None)


# ---------------------------------------------------------------------------------------------- audit tables

def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def same(expected, actual) -> bool:
    """Equal, numbers to a relative 1e-9 (3e-3 written as 0.003 or 3.0e-3), lists item by item."""
    if _is_number(expected) and _is_number(actual):
        return math.isclose(float(expected), float(actual), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(same(e, a) for e, a in zip(expected, actual))
    return type(expected) is type(actual) and expected == actual or (expected is None and actual is None)


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


Expectation = Tuple[Any, str]  # (value, source)


def load_table(path: str) -> Dict[str, Dict[str, Expectation]]:
    """``{config path: {key: (value, source)}}`` from one audit table; errors name the file, config and key."""
    data = read_yaml(path, AuditError)
    if not isinstance(data, dict) or not data:
        raise AuditError(f'{path}: expected a mapping {{config path: [{{source: ..., key: value, ...}}, ...]}}')
    table = {}
    for config, groups in data.items():
        where = f'{path}: {config}'
        if not isinstance(groups, list) or not groups:
            raise AuditError(f'{where}: expected a list of groups, each {{source: str, key: value, ...}}')
        expected: Dict[str, Expectation] = {}
        for i, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get('source'), str) or not group['source'].strip():
                raise AuditError(f"{where}, group {i + 1}: needs 'source' (where the values below are stated)")
            if len(group) < 2:
                raise AuditError(f"{where}, group {i + 1} ({group['source']}): states no value")
            for key, value in group.items():
                if key == 'source':
                    continue
                _check_entry(where, key, value)
                if key in expected and not same(expected[key][0], value):
                    raise AuditError(f"{where}: '{key}' is {expected[key][0]!r} in '{expected[key][1]}' but {value!r} "
                                     f"in '{group['source']}'; state the value the config follows, once")
                expected.setdefault(key, (value, group['source']))
        table[config] = expected
    return table


def _check_entry(where: str, key: str, value) -> None:
    if not isinstance(key, str) or ('.' not in key and key not in KEYS):
        raise AuditError(f"{where}: unknown key {key!r}; expected a dotted config path (model.mask_ratio) or one "
                         f"of {', '.join(KEYS)}")
    if isinstance(value, str) and _looks_numeric(value):
        raise AuditError(f"{where}: '{key}' is the string {value!r}; YAML reads 3e-3 as a string, write 3.0e-3")


def load_tables(paths) -> Dict[str, Dict[str, Expectation]]:
    """Several tables merged; a config audited in two tables is an error (one place per config)."""
    merged, origin = {}, {}
    for path in paths:
        for config, expected in load_table(path).items():
            if config in merged:
                raise AuditError(f'{config} is audited in both {origin[config]} and {path}; keep one')
            merged[config], origin[config] = expected, path
    return merged


def audit(config_path: str, expected: Dict[str, Expectation], repo: str = '.') -> List[str]:
    """One line per audited value that ``config_path`` (relative to ``repo``) does not have."""
    from mmengine.config import Config
    cfg = _as_dict(Config.fromfile(osp.join(repo, config_path)))
    values = hyperparameters(cfg)
    problems = []
    for key, (value, source) in expected.items():
        actual = _plain(values[key] if key in KEYS else lookup(cfg, key, _ABSENT))
        if actual is _ABSENT or not same(value, actual):
            problems.append(f'{config_path}: {key} is {actual!r}, expected {value!r} ({source})')
    return problems
