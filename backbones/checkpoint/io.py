"""Reading checkpoint files safely and writing the suite's own backbone format.

vitbench's own format (``work_dir/backbone.pth``, ``tools/convert_checkpoint.py`` output) is a plain dict::

    {'vitbench_backbone': 1,                 # format tag and version
     'arch': 'deit3_base_patch16_224',       # named variant, or None
     'overrides': {'drop_path_rate': 0.1},   # create_model() keyword overrides the weights were trained with
     'meta': {'model': 'VisionTransformer', 'img_size': [224, 224], 'patch_size': [16, 16],
              'pos_grid': [14, 14], ...},    # plus anything the writer adds (source file, epoch, ...)
     'state_dict': {...}}                    # the model's own keys (timm names; CaiT LayerScale as ls1/ls2)

It only holds tensors and plain Python values, so ``torch.load(weights_only=True)`` reads it.

``save_checkpoint(..., safetensors=True)`` also writes the same tensors, bit for bit, as ``<name>.safetensors``
beside it (:func:`save_safetensors`): readable without any unpickling, by other frameworks too, and by
``read_checkpoint`` as a plain state dict; ``arch``, ``overrides`` and ``meta`` go into its header metadata.
"""
import json
import os
import pickle
import re
import zipfile
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
    from vitbench.console import config_path  # the checkout's configs, or an installed package's
    configs = [c for c in (f'configs/pretrain/{run.group(1)}.py', f'configs/finetune/{run.group(1)}.py',
                           f'configs/demo/{run.group(1)}.py') if os.path.isfile(config_path(c))]
    made_by = f"run 'python tools/train.py {configs[0]}' first, " if configs else ''
    return (f": it is the backbone a pretraining run exports; {made_by}or pass --checkpoint PATH (any supported "
            f"format), or train from scratch with --cfg-options model.backbone.init_cfg=None")


def read_checkpoint(path: str, trust_pickle: bool = False, mmap: bool = False) -> Any:
    """Load ``path`` on the CPU with ``weights_only=True`` (``.safetensors`` files too).

    ``trust_pickle=True`` (only ``tools/convert_checkpoint.py --trust-pickle`` sets it) unpickles arbitrary
    objects: use it only for files from a source you trust. ``mmap=True`` maps the tensors of a zip-format file
    instead of reading them: a cheap check that the file loads. Every failure is a CheckpointError naming the file.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f'checkpoint file {path!r} does not exist{_missing_hint(path)}')
    if path.endswith('.safetensors'):
        from safetensors import SafetensorError
        from safetensors.torch import load_file
        try:
            return load_file(path, device='cpu')
        except (SafetensorError, OSError) as e:
            raise CheckpointError(f'{path}: cannot be read as a safetensors file ({e}); is it complete?') from None
    kind = _file_kind(path)
    try:
        return torch.load(path, map_location='cpu', weights_only=not trust_pickle, mmap=mmap and kind == 'zip')
    except pickle.UnpicklingError as e:
        blocked = re.search(r'unsupported GLOBAL ([\w.]+) whose module ([\w.]+) is blocked', str(e))
        if blocked is not None:  # a payload, not damage: a call that would run code (os.system, eval, ...)
            raise CheckpointError(
                f'{path}: torch.load(weights_only=True) refused it for what it holds, not for damage: its pickle '
                f'calls {blocked.group(1)}, of a module ({blocked.group(2)}) that loading a checkpoint must never run '
                '(a crafted file runs code this way). vitbench does not unpickle objects; do not load it with '
                '--trust-pickle unless you know what it runs') from None
        found = re.search(r'Unsupported global: GLOBAL ([\w.]+)', str(e))
        if found is None:  # refused for another reason than an object: damaged, or not a torch file
            raise CheckpointError(_unreadable(path, kind, e)) from None
        raise CheckpointError(
            f"{path}: torch.load(weights_only=True) refused it for what it holds, not for damage: the file holds "
            f"pickled Python objects "
            f"besides tensors (here: {found.group(1)}), as full training checkpoints do (e.g. an "
            f"argparse.Namespace under 'args'). "
            f"vitbench does not unpickle arbitrary objects. If you trust the file, extract its weights once:\n"
            f"    python tools/convert_checkpoint.py --trust-pickle {path} OUT.pth\n"
            f"and load OUT.pth instead.") from None
    except (RuntimeError, EOFError, OSError, ValueError, KeyError, AttributeError, IndexError) as e:
        raise CheckpointError(_unreadable(path, kind, e)) from None  # torch's own messages do not name the file


# What the first bytes of a file say it is: torch.save writes a zip archive (a pickle stream before torch 1.6).
_ZIP_MAGIC, _PICKLE_PROTOCOLS = b'PK\x03\x04', range(2, 6)


def _file_kind(path: str) -> str:
    """'zip' (torch.save's format), 'pickle' (a pickle stream: torch's legacy format or a plain pickle) or
    'other'."""
    with open(path, 'rb') as f:
        head = f.read(4)
    if head == _ZIP_MAGIC:
        return 'zip'
    if len(head) >= 2 and head[0] == 0x80 and head[1] in _PICKLE_PROTOCOLS:  # pickle's PROTO opcode
        return 'pickle'
    return 'other'


def _archive_intact(path: str) -> bool:
    """Whether every member of the zip archive at ``path`` reads back and matches its CRC: a file that fails to
    load although it is intact was refused for what it holds, not damaged in a copy."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError):
        return False


def _unreadable(path: str, kind: str, error: Exception) -> str:
    """Why ``path`` could not be loaded, without suggesting --trust-pickle: nothing here says that
    unpickling objects would help, and for a file of unknown origin that would be unsafe advice."""
    reason = str(error)
    detail = re.search(r'WeightsUnpickler error:\s*(.+)', reason)  # torch's long message hides the cause there
    reason = detail.group(1) if detail else reason.strip().splitlines()[0] if reason.strip() else type(error).__name__
    reason = reason.split('. ')[0][:200]  # the first sentence: torch goes on with generic advice
    if kind == 'zip' and _archive_intact(path):
        return (f'{path}: torch.load(weights_only=True) refused it for what it holds, not for damage (every member '
                f'of its zip archive matches its CRC): {reason}; vitbench does not unpickle arbitrary objects')
    if kind == 'zip':
        what = (f"a zip archive (torch.save's format) that is damaged or truncated ({reason}): it was probably not "
                'written or copied completely; copy or save it again')
    elif kind == 'pickle':
        what = (f"a pickle stream (torch's pre-1.6 format, or a plain pickle) that does not load as a checkpoint "
                f'({reason}): it may be truncated, or not a PyTorch checkpoint')
    else:
        with open(path, 'rb') as f:
            head = f.read(8)
        what = (f"not a PyTorch checkpoint: neither a zip archive (torch.save's format) nor a pickle "
                f'({os.path.getsize(path)} bytes, starting {head!r})')
    return f'{path}: cannot be loaded: {what}'


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
                    overrides: Optional[dict] = None, meta: Optional[dict] = None, safetensors: bool = False) -> str:
    """Write ``model``'s weights in the vitbench backbone format (atomically) and return ``path``.

    ``arch`` defaults to the name the model was created with; ``overrides`` are the ``create_model``
    keyword arguments it was built with, so ``create_model(arch, checkpoint=path, **overrides)`` rebuilds it.
    ``safetensors=True`` then also writes the same tensors to ``<name>.safetensors`` beside it
    (:func:`save_safetensors`).
    """
    arch = arch if arch is not None else getattr(model, 'arch', None)
    overrides = dict(overrides or {})
    info = dict(model_meta(model), **(meta or {}))
    _check_plain(overrides, 'overrides')
    _check_plain(info, 'meta')
    obj = {FORMAT_TAG: FORMAT_VERSION, 'arch': arch, 'overrides': overrides, 'meta': info,
           'state_dict': _unshared(model.state_dict())}
    path = os.fspath(path)
    with atomic_open(path) as f:
        torch.save(obj, f)
    if safetensors:
        save_safetensors(safetensors_path(path), obj)
    return path


def _unshared(state: dict) -> dict:
    """The state dict on the CPU, one tensor per key: a parameter tied across layers (BEiT pre-training's shared
    relative position bias) is written once per layer, as the untied model that loads it has it (safetensors
    refuses tensors that share memory)."""
    seen, out = set(), {}
    for k, v in state.items():
        v = v.detach().cpu().contiguous()
        key = (v.untyped_storage().data_ptr(), v.storage_offset()) if v.numel() else None
        out[k] = v.clone() if key in seen else v
        seen.add(key)
    return out


def safetensors_header(path: str) -> dict:
    """``arch``, ``overrides`` and ``meta`` of a file :func:`save_safetensors` wrote (read from its header, no tensor
    loaded); {} for other safetensors files. Errors are CheckpointErrors naming the file."""
    from safetensors import SafetensorError, safe_open
    try:
        with safe_open(os.fspath(path), framework='pt') as f:
            header = f.metadata() or {}
        if FORMAT_TAG not in header:
            return {}
        return {key: json.loads(header[key]) for key in ('arch', 'overrides', 'meta') if key in header}
    except (SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f'{path}: cannot read its safetensors header ({e}); is it complete?') from None


def safetensors_path(path: str) -> str:
    """Where the safetensors copy of a backbone file goes: ``backbone.pth`` -> ``backbone.safetensors``."""
    return os.path.splitext(os.fspath(path))[0] + '.safetensors'


def save_safetensors(path: str, obj: Mapping[str, Any]) -> str:
    """Write the ``state_dict`` of a backbone-format ``obj`` as a safetensors file (atomically) and return ``path``.

    safetensors metadata holds strings only: the format tag, and ``arch``, ``overrides`` and ``meta`` as JSON."""
    from safetensors.torch import save
    tensors, storages = {}, set()
    for key, tensor in obj['state_dict'].items():
        tensor = tensor.detach().cpu().contiguous()
        storage = tensor.untyped_storage().data_ptr()
        if storage in storages and tensor.numel():  # tied tensors: safetensors refuses storage shared by two keys
            tensor = tensor.clone()
        storages.add(storage)
        tensors[key] = tensor
    metadata = {'format': 'pt', FORMAT_TAG: str(obj.get(FORMAT_TAG, FORMAT_VERSION)),
                **{key: json.dumps(obj.get(key)) for key in ('arch', 'overrides', 'meta')}}
    data = save(tensors, metadata=metadata)  # the file in memory once: atomic_open writes it whole or not at all
    path = os.fspath(path)
    with atomic_open(path) as f:
        f.write(data)
    return path
