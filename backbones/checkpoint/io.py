"""Reading checkpoint files safely and writing the suite's own backbone format.

vitbench's own format (``work_dir/backbone.pth``, ``tools/convert_checkpoint.py`` output) is a plain dict::

    {'vitbench_backbone': 1,                 # format tag and version
     'arch': 'deit3_base_patch16_224',       # named variant, or None
     'overrides': {'drop_path_rate': 0.1},   # create_model() keyword overrides the weights were trained with
     'meta': {'model': 'VisionTransformer', 'img_size': [224, 224], 'patch_size': [16, 16],
              'pos_grid': [14, 14], ...},    # plus anything the writer adds (source file, epoch, ...)
     'state_dict': {...}}                    # the model's own keys (timm names; CaiT LayerScale as ls1/ls2)

It only holds tensors and plain Python values, so ``torch.load(weights_only=True)`` reads it.
"""
import os
import pickle
import re
from typing import Any, Mapping, Optional

import torch
from torch import nn

from vitbench.fileio import atomic_open

FORMAT_TAG = 'vitbench_backbone'
FORMAT_VERSION = 1
_PLAIN = (type(None), bool, int, float, str)


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be read or does not match the model; the message says what and why."""


def _missing_hint(path: str) -> str:
    """How a missing ``work_dirs/<run>/backbone.pth`` (the configs' default weights) gets made."""
    run = re.search(r'work_dirs/(?:demo/)?([^/]+)/backbone\.pth$', path.replace(os.sep, '/'))
    if not run:
        return ''
    configs = [c for c in (f'configs/pretrain/{run.group(1)}.py', f'configs/finetune/{run.group(1)}.py',
                           f'configs/demo/{run.group(1)}.py') if os.path.isfile(c)]
    made_by = f"run 'python tools/train.py {configs[0]}' first, " if configs else ''
    return (f": it is the backbone a pretraining run exports; {made_by}or pass --checkpoint PATH (any supported "
            f"format), or train from scratch with --cfg-options model.backbone.init_cfg=None")


def read_checkpoint(path: str, trust_pickle: bool = False) -> Any:
    """Load ``path`` on the CPU with ``weights_only=True`` (``.safetensors`` files too).

    ``trust_pickle=True`` (only ``tools/convert_checkpoint.py --trust-pickle`` sets it) unpickles arbitrary
    objects: use it only for files from a source you trust.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'checkpoint file {path!r} does not exist{_missing_hint(path)}')
    if path.endswith('.safetensors'):
        from safetensors.torch import load_file
        return load_file(path, device='cpu')
    try:
        return torch.load(path, map_location='cpu', weights_only=not trust_pickle)
    except pickle.UnpicklingError as e:
        found = re.search(r'Unsupported global: GLOBAL ([\w.]+)', str(e))
        what = f' (here: {found.group(1)})' if found else ''
        raise CheckpointError(
            f"{path}: torch.load(weights_only=True) refused it: the file holds pickled Python objects "
            f"besides tensors{what}, as full training checkpoints do (e.g. an argparse.Namespace under "
            f"'args'). "
            f"vitbench does not unpickle arbitrary objects. If you trust the file, extract its weights once:\n"
            f"    python tools/convert_checkpoint.py --trust-pickle {path} OUT.pth\n"
            f"and load OUT.pth instead.") from None


def _check_plain(value: Any, where: str):
    """Raise TypeError unless ``value`` is built from None/bool/int/float/str/list/tuple/dict(str keys)."""
    if isinstance(value, _PLAIN):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_plain(v, f'{where}[{i}]')
        return
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f'{where}: keys must be strings, got {k!r}')
            _check_plain(v, f'{where}.{k}')
        return
    raise TypeError(f'{where} is a {type(value).__name__}; the backbone format only stores plain values '
                    f'(None, bool, int, float, str, list, tuple, dict) so that weights_only loading reads it')


def model_meta(model: nn.Module) -> dict:
    """Geometry the loader needs to interpret the state dict (position-embedding grid, ...)."""
    meta = {'model': type(model).__name__}
    patch_embed = getattr(model, 'patch_embed', None)
    if patch_embed is not None:
        meta.update(img_size=list(patch_embed.img_size), patch_size=list(patch_embed.patch_size),
                    pos_grid=list(patch_embed.grid_size))
    return meta


def save_checkpoint(path: str, model: nn.Module, arch: Optional[str] = None,
                    overrides: Optional[dict] = None, meta: Optional[dict] = None) -> str:
    """Write ``model``'s weights in the vitbench backbone format (atomically) and return ``path``.

    ``arch`` defaults to the name the model was created with; ``overrides`` are the ``create_model``
    keyword arguments it was built with, so ``create_model(arch, checkpoint=path, **overrides)`` rebuilds it.
    """
    arch = arch if arch is not None else getattr(model, 'arch', None)
    overrides = dict(overrides or {})
    info = dict(model_meta(model), **(meta or {}))
    _check_plain(overrides, 'overrides')
    _check_plain(info, 'meta')
    obj = {FORMAT_TAG: FORMAT_VERSION, 'arch': arch, 'overrides': overrides, 'meta': info,
           'state_dict': {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}}
    path = os.fspath(path)
    with atomic_open(path) as f:
        torch.save(obj, f)
    return path
