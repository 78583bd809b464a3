"""The protocol audit: what a downstream protocol (``configs/_base_/protocols/<name>.py``) builds, read from the
built objects, against the values its official sources state (``tests/protocol_audit/*.yaml``).

:func:`build` loads a config and builds its model and optimiser wrapper on the meta device (no memory, no
weights), as ``param_table`` does in a run. :func:`read` then reads one audited key from what was built:

- ``optimizer.type`` / ``.lr`` / ``.betas`` / ``.weight_decay``: the torch optimiser (its class, its defaults);
- ``param.<parameter name>.<field>``: the parameter's row of the param table (``weight_decay``, ``layer_id``,
  ``lr_scale``, ``trains``): which parameters are decayed and in which layer, as the optimiser has them;
- ``layer_decay``: the rate the built groups apply (the scale of the top layer but one; 1.0 without layers);
- ``model.<attribute path>``: an attribute of the built model (``model.decode_head.channels``,
  ``model.train_cfg.rcnn.assigner.pos_iou_thr``, ``model.backbone.blocks.0.attn.window_size``; list items by
  index);
- ``cfg.<dotted path>``: the config as resolved after the protocol and its bases applied (the pipelines as
  they will run, the schedulers, the loop, the loaders);
- ``wrapper.<attribute path>``: the optimiser wrapper (``wrapper.clip_grad_kwargs.max_norm``);
- ``pipeline.<train|test>.<i>.<attribute path>``: step ``i`` of the train / test dataloader's pipeline, built
  (``pipeline.test.1.transform.transforms.0.size``: the resize a centre crop ratio gives; enums as their value);
- ``drop_path``: the largest stochastic-depth rate of the built model's DropPath modules (0.0 without any);
- ``wrapper.type``: the class of the built optimiser wrapper (``OptimWrapper``: float32; an AMP wrapper when the
  protocol fixed a precision);
- ``preprocessor.<attribute path>``: the model's data preprocessor built on the CPU (``preprocessor.mean`` /
  ``.std``: the normalisation its buffers hold, per channel, in 0-255 units);
- ``scheduler.<i>.<attribute path>``: parameter scheduler ``i`` built as mmengine builds it (``scheduler.0.type``:
  its class; ``.begin``, ``.end``, ``.by_epoch``, ``.start_factor``, ``.eta_min``, ``.power``, ``.milestones``,
  ``.gamma``), an ``end`` left out set to the loop's length as the Runner does; a ``convert_to_iter_based`` one is
  read in its own unit (epochs: the conversion needs the loader's length);
- ``ema``: the momentum of the model EMA hook among the config's ``custom_hooks``, built; null without one.

An audit table maps a protocol to the config it builds and to groups of values, each group with its source::

    upernet_xcit160k:
      config: configs/_base_/protocols/upernet_xcit160k.py
      groups:
        - source: "[XCIT] XCiT-S12/16's UperNet config (the table's header names the file)"
          optimizer.lr: 6.0e-5
          param.backbone.blocks.0.attn.qkv.bias.weight_decay: 0.01

An entry may add ``header: <file>``, the file whose header states its deliberate differences (a transfer
recipe, ``configs/_base_/transfer_*.py``, audited through a config that derives from it); default ``config``.
A value the protocol deliberately does not take from its source is written with ``differs: <reason>`` in its own
group (the value is then the protocol's, and the reason is also stated in the protocol file's header).
:func:`audit` returns one line per value the built protocol does not have.
"""
import enum
import os.path as osp
from typing import Any, Dict, List, Tuple

from mmengine.config import Config

from pretrain.recipe_audit import AuditError, _looks_numeric, _plain, same
from vitbench.yaml_file import read_yaml

from .param_table import optimizers_of, param_table

_ABSENT = type('Absent', (), {'__repr__': lambda self: 'absent'})()
PREFIXES = ('optimizer.', 'param.', 'model.', 'cfg.', 'wrapper.', 'pipeline.', 'preprocessor.', 'scheduler.')
SPECIAL = ('layer_decay', 'drop_path', 'ema')
LOADERS = {'train': 'train_dataloader', 'test': 'test_dataloader'}


def build(config_path: str):
    """(cfg, model, wrapper, {name: param-table row}) of a config, built on the meta device."""
    import torch
    from mmengine.optim import build_optim_wrapper
    from mmengine.registry import MODELS, DefaultScope
    cfg = Config.fromfile(config_path)
    scope = cfg.get('default_scope', 'vitbench')
    __import__('downstream')  # registers the seg / det glue
    if scope in ('mmseg', 'mmdet'):
        __import__(f'{scope}.models')
    with DefaultScope.overwrite_default_scope(scope), torch.device('meta'):
        model = MODELS.build(cfg.model)
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    rows = {r['name']: r for r in param_table(model, optimizers_of(wrapper))}
    return cfg, model, wrapper, rows


def _attr(node, path: str):
    for part in path.split('.'):
        if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif hasattr(node, 'get') and not hasattr(node, 'named_parameters') and part in node:
            node = node[part]
        elif hasattr(node, part):
            node = getattr(node, part)
        elif part.isdigit() and hasattr(node, '__getitem__'):  # nn.ModuleList, nn.Sequential
            try:
                node = node[int(part)]
            except (IndexError, TypeError, KeyError):
                return _ABSENT
        else:
            return _ABSENT
    return node


def read(built, key: str):
    """The value of one audited key (module docstring) from :func:`build`'s result; ``absent`` when missing."""
    cfg, model, wrapper, rows = built
    optimizer = wrapper.optimizer
    if key == 'layer_decay':
        ids = {r['layer_id'] for r in rows.values() if r.get('layer_id') is not None}
        if len(ids) < 2:
            return 1.0
        below_top = sorted(ids)[-2]
        return next(r['lr_scale'] for r in rows.values() if r.get('layer_id') == below_top)
    if key == 'drop_path':
        return max((float(m.drop_prob) for m in model.modules() if type(m).__name__ == 'DropPath'), default=0.0)
    if key == 'optimizer.type':
        return type(optimizer).__name__
    if key == 'wrapper.type':
        return type(wrapper).__name__
    if key == 'ema':
        return _ema_momentum(cfg)
    if key.startswith('preprocessor.'):
        return _plain(_as_plain(_attr(_built_preprocessor(cfg), key[len('preprocessor.'):])))
    if key.startswith('scheduler.'):
        index, _, path = key[len('scheduler.'):].partition('.')
        schedulers = _built_schedulers(cfg)
        if not index.isdigit() or int(index) >= len(schedulers):
            return _ABSENT
        if path == 'type':
            return type(schedulers[int(index)]).__name__
        return _plain(_as_plain(_attr(schedulers[int(index)], path)))
    if key.startswith('optimizer.'):
        value = optimizer.defaults.get(key[len('optimizer.'):], _ABSENT)
        return _plain(list(value) if isinstance(value, tuple) else value)
    if key.startswith('param.'):
        name, field = key[len('param.'):].rsplit('.', 1)
        row = rows.get(name)
        return _ABSENT if row is None else row.get(field, _ABSENT)
    if key.startswith('model.'):
        return _plain(_as_plain(_attr(model, key[len('model.'):])))
    if key.startswith('cfg.'):
        return _plain(_as_plain(_attr(cfg, key[len('cfg.'):])))
    if key.startswith('wrapper.'):
        return _plain(_as_plain(_attr(wrapper, key[len('wrapper.'):])))
    if key.startswith('pipeline.'):
        loader, _, path = key[len('pipeline.'):].partition('.')
        if loader not in LOADERS:
            raise AuditError(f'{key!r}: expected pipeline.train.<i>... or pipeline.test.<i>...')
        return _plain(_as_plain(_attr(_built_pipeline(cfg, LOADERS[loader]), path)))
    raise AuditError(f"unknown key {key!r}: expected {', '.join(SPECIAL)} or a key starting with {PREFIXES}")


def _built_pipeline(cfg, loader: str) -> list:
    from mmengine.registry import TRANSFORMS, DefaultScope
    dataset = cfg[loader]['dataset']
    while 'pipeline' not in dataset and 'dataset' in dataset:  # a dataset wrapper
        dataset = dataset['dataset']
    with DefaultScope.overwrite_default_scope(cfg.get('default_scope', 'vitbench')):
        return [TRANSFORMS.build(step) for step in dataset['pipeline']]


def _built_preprocessor(cfg):
    """The model's data preprocessor, built on the CPU (its mean / std buffers hold values; the model is on meta)."""
    from mmengine.registry import MODELS, DefaultScope
    with DefaultScope.overwrite_default_scope(cfg.get('default_scope', 'vitbench')):
        return MODELS.build(cfg.model.data_preprocessor)


def _built_schedulers(cfg) -> list:
    """The config's parameter schedulers as mmengine builds them, on a one-parameter optimiser (what they are does
    not depend on the model's): an ``end`` left out is the loop's length, as the Runner sets it."""
    import torch
    from mmengine.optim import OptimWrapper
    from mmengine.registry import PARAM_SCHEDULERS, DefaultScope
    specs = cfg.get('param_scheduler') or []
    specs = [specs] if isinstance(specs, dict) else list(specs)
    wrapper = OptimWrapper(torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0))
    train_cfg = cfg.get('train_cfg') or {}
    built = []
    with DefaultScope.overwrite_default_scope(cfg.get('default_scope', 'vitbench')):
        for spec in specs:
            spec = dict(spec)
            spec.pop('convert_to_iter_based', None)
            if 'end' not in spec:
                spec['end'] = train_cfg.get('max_epochs' if spec.get('by_epoch', True) else 'max_iters')
            built.append(PARAM_SCHEDULERS.build(dict(spec, optimizer=wrapper)))
    return built


def _ema_momentum(cfg):
    from mmengine.registry import HOOKS
    for hook in cfg.get('custom_hooks') or []:
        if 'EMA' in str(hook.get('type', '')):
            return float(HOOKS.build(dict(hook)).momentum)
    return None


def _as_plain(value):
    import collections

    import torch
    if isinstance(value, torch.Tensor):
        return [round(float(v), 4) for v in value.detach().flatten()]
    if isinstance(value, collections.Counter):  # a MultiStep scheduler's milestones
        return sorted(value.elements())
    if isinstance(value, enum.Enum):
        return value.value
    if hasattr(value, 'to_dict'):
        return value.to_dict()
    if isinstance(value, tuple):
        return list(value)
    return value


Expectation = Tuple[Any, str]  # (value, source)


def load_table(path: str) -> Dict[str, dict]:
    """``{protocol: {'config': path, 'values': {key: (value, source)}, 'differs': {key: reason}}}``."""
    data = read_yaml(path, AuditError)
    if not isinstance(data, dict) or not data:
        raise AuditError(f'{path}: expected a mapping {{protocol: {{config: ..., groups: [...]}}}}')
    table = {}
    for protocol, entry in data.items():
        where = f'{path}: {protocol}'
        if not isinstance(entry, dict) or not isinstance(entry.get('config'), str) or \
                not isinstance(entry.get('groups'), list) or not entry['groups']:
            raise AuditError(f'{where}: expected {{config: <config it builds>, groups: [{{source: ..., key: value}}]}}')
        values: Dict[str, Expectation] = {}
        differs: Dict[str, str] = {}
        for i, group in enumerate(entry['groups']):
            if not isinstance(group, dict) or not isinstance(group.get('source'), str) or not group['source'].strip():
                raise AuditError(f"{where}, group {i + 1}: needs 'source' (the official file the values come from)")
            keys = [k for k in group if k not in ('source', 'differs')]
            if not keys:
                raise AuditError(f"{where}, group {i + 1} ({group['source']}): states no value")
            for key in keys:
                value = group[key]
                if not isinstance(key, str) or (key not in SPECIAL and not key.startswith(PREFIXES)):
                    raise AuditError(f'{where}: unknown key {key!r}; expected {SPECIAL} or {PREFIXES}...')
                if isinstance(value, str) and _looks_numeric(value):
                    raise AuditError(f"{where}: '{key}' is the string {value!r}; write 3.0e-3, not 3e-3")
                if key in values:
                    raise AuditError(f"{where}: '{key}' is stated twice ({values[key][1]}, {group['source']})")
                values[key] = (value, group['source'])
                if group.get('differs'):
                    differs[key] = str(group['differs'])
        table[protocol] = dict(config=entry['config'], header=entry.get('header', entry['config']), values=values,
                               differs=differs)
    return table


def audit(entry: dict, repo: str = '.', built=None) -> List[str]:
    """One line per audited value the built protocol does not have."""
    built = built or build(osp.join(repo, entry['config']))
    problems = []
    for key, (value, source) in entry['values'].items():
        actual = read(built, key)
        if actual is _ABSENT or not same(_plain(value), actual):
            problems.append(f"{entry['config']}: {key} is {actual!r}, expected {value!r} ({source})")
    return problems
