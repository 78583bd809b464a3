"""Recognise a checkpoint's format and rename its keys to vitbench's (timm's) names.

Handled (detected from the keys, in this order):
- vitbench backbone files (``save_checkpoint``) and mmengine runner checkpoints (``state_dict``; when keys
  carry a ``backbone.`` prefix, that sub-module is taken);
- facebookresearch/deit official files, ``{'model': state_dict}`` with or without ``module.``: DeiT and
  distilled DeiT (timm names), DeiT III / CaiT (``gamma_1``/``gamma_2`` LayerScale), three-things parallel
  blocks (``norm11``, ``attn1``, ``gamma_1_1``...), hMLP stem (``patch_embed.proj.{0..7}``);
- facebookresearch/mae pre-training (encoder kept, ``decoder_*`` and ``mask_token`` dropped) and fine-tuned
  files (``fc_norm``);
- MAE-lite files (``{'model': {'model.<key>': ...}}``; teacher, adapters and EMA copies dropped);
- a family's own formats, its record's ``checkpoint_formats`` (backbones/family.py), tried family by family in
  the order the families registered (each ``detect`` must match its own files only): facebookresearch/deit ResMLP
  files (bare state dicts: ``attn`` = the cross-patch layer, ``mlp``, ``gamma_1``/``gamma_2``) and timm's ResMLP
  (``stem``, bare ``ls1``/``ls2``, (1, 1, C) Affine parameters); facebookresearch/deit PatchConvNet files
  (``{'model': ...}``: ``attn.qkv_pos.{0,2,4,5}`` trunk blocks, ``patch_embed.proj.{0,2,4,6}.0`` stem);
- timm state dicts (already in vitbench's names).
"""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch

from ..family import FAMILIES, CheckpointFormat
from .io import FORMAT_TAG, CheckpointError

# official DeiT III / CaiT LayerScale parameters -> LayerScale modules
_LAYER_SCALE = re.compile(r'^(blocks|blocks_token_only)\.(\d+)\.gamma_([12])$')
# official three-things parallel blocks (two branches) -> attns.i / ffns.i branches
_PARALLEL = {
    'norm1': 'attns.0.norm', 'attn': 'attns.0.attn', 'gamma_1': 'attns.0.ls.gamma',
    'norm11': 'attns.1.norm', 'attn1': 'attns.1.attn', 'gamma_1_1': 'attns.1.ls.gamma',
    'norm2': 'ffns.0.norm', 'mlp': 'ffns.0.mlp', 'gamma_2': 'ffns.0.ls.gamma',
    'norm21': 'ffns.1.norm', 'mlp1': 'ffns.1.mlp', 'gamma_2_1': 'ffns.1.ls.gamma',
}
_BLOCK_KEY = re.compile(r'^blocks\.(\d+)\.([^.]+)(.*)$')
# ResMLP: official (resmlp_models.py) and timm (mlp_mixer.py) names -> vitbench's
_RESMLP_OFFICIAL = [(re.compile(r'^(blocks\.\d+)\.attn\.'), r'\1.linear_tokens.'),
                    (re.compile(r'^(blocks\.\d+)\.mlp\.'), r'\1.mlp_channels.')]
_RESMLP_TIMM = [(re.compile(r'^stem\.'), 'patch_embed.'), (re.compile(r'^(blocks\.\d+)\.(ls[12])$'), r'\1.\2.gamma')]
# PatchConvNet: official (patchconvnet_models.py) trunk blocks and stem -> vitbench's
_PATCHCONVNET_OFFICIAL = [
    (re.compile(r'^(blocks\.\d+)\.attn\.qkv_pos\.0\.'), r'\1.conv1.'),
    (re.compile(r'^(blocks\.\d+)\.attn\.qkv_pos\.2\.'), r'\1.dwconv.'),
    (re.compile(r'^(blocks\.\d+)\.attn\.qkv_pos\.4\.conv_reduce\.'), r'\1.se.fc1.'),
    (re.compile(r'^(blocks\.\d+)\.attn\.qkv_pos\.4\.conv_expand\.'), r'\1.se.fc2.'),
    (re.compile(r'^(blocks\.\d+)\.attn\.qkv_pos\.5\.'), r'\1.conv2.'),
    (re.compile(r'^patch_embed\.proj\.(\d+)\.0\.'), r'patch_embed.proj.\1.'),
]


@dataclass
class Canonical:
    """A state dict in vitbench's key names plus what was learnt on the way."""
    state_dict: Dict[str, torch.Tensor]
    source: str
    notes: List[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    arch: Optional[str] = None


def _is_state_dict(obj) -> bool:
    return isinstance(obj, dict) and bool(obj) and all(isinstance(v, torch.Tensor) for v in obj.values())


def _unwrap(obj, path: str) -> Canonical:
    if not isinstance(obj, dict):
        raise CheckpointError(f'{path}: expected a dict (a state dict or a checkpoint holding one), '
                              f'got {type(obj).__name__}')
    if FORMAT_TAG in obj:
        return Canonical(dict(obj['state_dict']), 'vitbench backbone', meta=dict(obj.get('meta') or {}),
                         arch=obj.get('arch'))
    if isinstance(obj.get('state_dict'), dict):
        runner = 'meta' in obj or 'message_hub' in obj
        return Canonical(dict(obj['state_dict']), 'mmengine checkpoint' if runner else 'state dict')
    if isinstance(obj.get('model'), dict):
        return Canonical(dict(obj['model']), "official (dict with 'model')")
    if _is_state_dict(obj):
        return Canonical(dict(obj), 'state dict')
    raise CheckpointError(f"{path}: no state dict found; top-level keys: {sorted(obj)[:12]}. Expected a state "
                          f"dict, or a dict holding one under 'model' or 'state_dict'")


def _take_prefix(ck: Canonical, prefix: str, why: str):
    kept = {k[len(prefix):]: v for k, v in ck.state_dict.items() if k.startswith(prefix)}
    dropped = sorted({k.split('.')[0] for k in ck.state_dict if not k.startswith(prefix)})
    ck.state_dict = kept
    if dropped:
        ck.notes.append(f"{why}: took the '{prefix}' sub-module, ignored {dropped}")


def _drop(ck: Canonical, predicate, note: str):
    dropped = [k for k in ck.state_dict if predicate(k)]
    if dropped:
        for k in dropped:
            del ck.state_dict[k]
        ck.notes.append(f'{note} ({len(dropped)} tensors)')
    return bool(dropped)


def _rename_parallel(sd: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    out = {}
    for k, v in sd.items():
        m = _BLOCK_KEY.match(k)
        if m and m.group(2) in _PARALLEL:
            k = f'blocks.{m.group(1)}.{_PARALLEL[m.group(2)]}{m.group(3)}'
        out[k] = v
    return out


def _rename(sd: Dict[str, torch.Tensor], rules) -> Dict[str, torch.Tensor]:
    out = {}
    for k, v in sd.items():
        for pattern, repl in rules:
            k = pattern.sub(repl, k)
        out[k] = v
    return out


def _resmlp_timm(sd: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
    sd = _rename(sd, _RESMLP_TIMM)
    # timm keeps the Affine parameters as (1, 1, C)
    return {k: v.reshape(-1) if k.endswith(('.alpha', '.beta')) else v for k, v in sd.items()}


# the formats of the ResMLP and PatchConvNet records (backbones/resmlp.py, backbones/patchconvnet.py)
RESMLP_TIMM = CheckpointFormat('timm ResMLP',
                               lambda sd: 'blocks.0.linear_tokens.weight' in sd and 'stem.proj.weight' in sd,
                               _resmlp_timm)
RESMLP_OFFICIAL = CheckpointFormat('facebookresearch/deit ResMLP',
                                   lambda sd: 'blocks.0.norm1.alpha' in sd and 'blocks.0.attn.weight' in sd,
                                   lambda sd: _rename(sd, _RESMLP_OFFICIAL))
PATCHCONVNET_OFFICIAL = CheckpointFormat('facebookresearch/deit PatchConvNet',
                                         lambda sd: any('.attn.qkv_pos.' in k for k in sd),
                                         lambda sd: _rename(sd, _PATCHCONVNET_OFFICIAL))


def _rename_families(ck: Canonical) -> None:
    """A family's own key names (its record's ``checkpoint_formats``, backbones/family.py) to vitbench's, recognised
    by their own keys: the first format that recognises them."""
    for fmt in (f for family in FAMILIES.values() for f in family.checkpoint_formats):
        if fmt.detect(ck.state_dict):
            ck.state_dict, ck.source = fmt.convert(ck.state_dict), fmt.source
            return


def to_canonical(obj, path: str, prefix: Optional[str] = None) -> Canonical:
    """Unwrap a loaded checkpoint and rename its keys to vitbench's; ``prefix`` selects a sub-module."""
    ck = _unwrap(obj, path)
    sd = ck.state_dict
    if sd and all(k.startswith('module.') for k in sd):  # saved from a DistributedDataParallel wrapper
        ck.state_dict = sd = {k[len('module.'):]: v for k, v in sd.items()}
    bad = sorted(k for k, v in sd.items() if not isinstance(v, torch.Tensor))
    if bad:
        raise CheckpointError(f'{path}: the state dict has non-tensor entries {bad[:8]}')

    if prefix:
        if not any(k.startswith(prefix) for k in sd):
            raise CheckpointError(f"{path}: no key starts with prefix {prefix!r}; first keys: {sorted(sd)[:8]}")
        _take_prefix(ck, prefix, f'prefix {prefix!r}')
    elif any(k.startswith('backbone.') for k in sd):
        _take_prefix(ck, 'backbone.', ck.source)
    elif any(k.startswith('model.') for k in sd) and not any(k.startswith('blocks.') for k in sd):
        # MAE-lite wraps the network as `.model` next to a teacher / adapters / EMA copy
        ck.source = 'MAE-lite'
        _take_prefix(ck, 'model.', 'MAE-lite')
    sd = ck.state_dict

    if _drop(ck, lambda k: k.startswith('decoder_') or k == 'mask_token',
             'MAE pre-training decoder dropped (decoder_*, mask_token); the encoder is loaded'):
        ck.source = 'MAE-lite pre-training' if ck.source == 'MAE-lite' else 'facebookresearch/mae pre-training'
    _drop(ck, lambda k: k.startswith('dist_norm.') or (k.startswith('head_dist.') and 'dist_norm.weight' in sd),
          'MAE-lite distillation head dropped (dist_norm, head_dist)')
    sd = ck.state_dict

    _rename_families(ck)
    sd = ck.state_dict
    if any(re.match(r'^blocks\.\d+\.norm11\.', k) for k in sd):
        ck.state_dict = sd = _rename_parallel(sd)
        ck.source = 'facebookresearch/deit three-things parallel'
    if any(_LAYER_SCALE.match(k) for k in sd):
        ck.state_dict = sd = {_LAYER_SCALE.sub(r'\1.\2.ls\3.gamma', k): v for k, v in sd.items()}
        if not ck.source.startswith('facebookresearch'):
            ck.source = 'CaiT (facebookresearch/deit or timm)' if any(k.startswith('blocks_token_only.') for k in sd) \
                else 'facebookresearch/deit DeiT III'
    if ck.source == "official (dict with 'model')":
        ck.source = 'facebookresearch/mae fine-tuned' if 'fc_norm.weight' in sd else 'facebookresearch/deit DeiT'
    elif ck.source == 'state dict':
        ck.source = 'timm state dict'
    return ck
