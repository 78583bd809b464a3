"""A downstream protocol: the named set of settings a paper table was measured under, and its digest.

A protocol lives in one config file, ``configs/_base_/protocols/<name>.py`` (the schedule, data and runtime it
takes, the source it follows in its header), which declares::

    experiment = dict(protocol=dict(name='upernet_xcit160k', settings=['optim_wrapper', 'param_scheduler', ...],
                                    heads=dict(decode_head='by_width', auxiliary_head=256)))

``settings`` are the dotted config keys the protocol fixes, its model-side ones (test mode) included. ``heads``,
for a dense task, is its head rule: the widths of heads and neck as a rule of the backbone a run has
(downstream/head_rule.py), the same for every run, swapped or not; a config derived from the protocol sets what
the rule gives its backbone. ``result.json`` records the name and a digest of the settings' values as the run
resolved them and of the head rule (:func:`protocol_of`): two runs under one protocol name and one digest ran
the same settings and sized their heads by the same rule; a ``--cfg-options`` that changes one of them changes
the digest. (The rule, not the widths it gives: a ViT-S and a ViT-B under one protocol share its digest.) The
leaderboard sets a measured cell beside a paper number only under the paper table's protocol
(``vitbench/results/reproduction.py``).
"""
import hashlib
import json
from typing import Optional

_MISSING = object()


class ProtocolError(ValueError):
    pass


def protocol_of(cfg) -> Optional[dict]:
    """``{'name': ..., 'digest': ...}`` of the config's ``experiment.protocol``; None for a config without one
    (pre-training and ImageNet fine-tuning: their recipe is their config)."""
    spec = (cfg.get('experiment') or {}).get('protocol')
    if spec is None:
        return None
    where = f'config {cfg.filename}: experiment.protocol'
    if not isinstance(spec, dict) or not isinstance(spec.get('name'), str) or not spec['name']:
        raise ProtocolError(f"{where} is {spec!r}, expected dict(name='<protocol>', settings=['<dotted key>', ...])")
    settings = spec.get('settings')
    if not isinstance(settings, (list, tuple)) or not settings or not all(isinstance(k, str) for k in settings):
        raise ProtocolError(f'{where}.settings is {settings!r}, expected a list of dotted config keys')
    values = {}
    for key in settings:
        value = lookup(cfg, key)
        if value is _MISSING and key.startswith('model.'):  # tools/test.py --tta: the wrapped model's settings
            value = lookup(cfg, 'model.module.' + key[len('model.'):])
        if value is _MISSING:
            raise ProtocolError(f"{where} ({spec['name']}) fixes '{key}', which the config does not have")
        values[key] = value
    heads = spec.get('heads')
    if heads is not None:
        if not isinstance(heads, dict) or not heads or not all(isinstance(k, str) for k in heads):
            raise ProtocolError(f"{where}.heads is {heads!r}, expected the head rule, e.g. dict(decode_head="
                                f"'by_width', auxiliary_head=256) (downstream/head_rule.py)")
        values['experiment.protocol.heads'] = heads  # the rule, whatever backbone it sized
    return dict(name=spec['name'], digest=settings_digest(values))


def lookup(cfg, dotted: str):
    """The value at ``a.b.c`` of a config (dicts, and list indices as numbers); a sentinel when absent."""
    node = cfg
    for part in dotted.split('.'):
        if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif hasattr(node, 'get') and part in node:
            node = node[part]
        else:
            return _MISSING
    return node


def settings_digest(values: dict) -> str:
    """12 hex digits of the sha256 of the values as canonical JSON (mmengine ConfigDicts are dicts)."""
    text = json.dumps(_plain(values), sort_keys=True, separators=(',', ':'))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _plain(value):
    if hasattr(value, 'items'):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
