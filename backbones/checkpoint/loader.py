"""Load any supported checkpoint into a vitbench model, exactly or with a clear error.

After the keys are renamed (``formats.py``) the state dict is adapted to the model, each step with a note:
- position embeddings: rows for prefix tokens are folded into / added for the class and distillation tokens
  when the two conventions differ (exact: a token's input is token + its position), then the grid is
  resized bicubically when the resolution differs;
- a classifier head of another size is dropped, the model keeps a fresh head;
- parts the model deliberately does not have (head of a backbone, final norm of an fc_norm model, CaiT's
  class-attention stage of a dense trunk) are dropped;
- a head or fc_norm missing from the checkpoint (e.g. MAE pre-training) stays freshly initialised, and so do
  relative position tables (``use_rel_pos``, which pretrained files never have): at zero they add nothing;
- relative position tables of another length (saved at another input size) are resized linearly, as the
  layers resize them at run time;
- with ``keep_blocks=k`` only the embedding and the first k blocks are loaded (the rest stays fresh).
Anything else that does not match raises :class:`CheckpointError` listing missing, unexpected and
mis-shaped keys, with a hint when the cause is recognisable.
"""
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import torch
from mmengine.logging import print_log
from torch import nn

from ..layers import is_rel_pos_key, resample_pos_embed, resize_rel_pos, square_grid
from .formats import to_canonical
from .io import CheckpointError, read_checkpoint

_PREFIX_TOKENS = ('cls_token', 'dist_token')


@dataclass
class LoadReport:
    path: str
    source: str
    notes: List[str] = field(default_factory=list)


def _matches(key: str, prefix: str) -> bool:
    return key.startswith(prefix) if prefix.endswith('.') else key == prefix


def _adapt_pos_embed(model: nn.Module, sd: Dict[str, torch.Tensor], meta: dict, notes: List[str]):
    if 'pos_embed' not in sd or not isinstance(getattr(model, 'pos_embed', None), torch.Tensor):
        return
    pos = sd['pos_embed']
    n_ckpt = pos.shape[1]
    p_model = model.pos_embed_prefix
    if meta.get('pos_grid'):
        grid = tuple(meta['pos_grid'])
        p_ckpt = n_ckpt - grid[0] * grid[1]
    else:  # infer: a square grid plus 0-2 prefix rows, the model's own convention first
        for p_ckpt in dict.fromkeys((p_model, 0, 1, 2)):
            grid = square_grid(n_ckpt - p_ckpt)
            if grid:
                break
        else:
            raise CheckpointError(f'pos_embed has {n_ckpt} rows, which is not a square grid plus 0-2 prefix '
                                  f'tokens; save the checkpoint with vitbench (it records the grid)')
    if p_ckpt > p_model:
        for j in range(p_model, p_ckpt):
            name = _PREFIX_TOKENS[j]
            if name in sd:
                sd[name] = sd[name] + pos[:, j:j + 1]
        pos = torch.cat([pos[:, :p_model], pos[:, p_ckpt:]], dim=1)
        notes.append(f'position rows of {list(_PREFIX_TOKENS[p_model:p_ckpt])} folded into the tokens '
                     f'(the model embeds positions of patch tokens only)')
    elif p_ckpt < p_model:
        zeros = pos.new_zeros(1, p_model - p_ckpt, pos.shape[2])
        pos = torch.cat([pos[:, :p_ckpt], zeros, pos[:, p_ckpt:]], dim=1)
        notes.append(f'zero position rows added for {list(_PREFIX_TOKENS[p_ckpt:p_model])} '
                     f'(the checkpoint embeds positions of patch tokens only)')
    if grid != tuple(model.grid_size):
        pos = resample_pos_embed(pos, model.grid_size, grid, p_model)
        notes.append(f'position embedding resized bicubically from a {grid[0]}x{grid[1]} to a '
                     f'{model.grid_size[0]}x{model.grid_size[1]} grid')
    sd['pos_embed'] = pos


def _adapt_rel_pos(own: Dict[str, torch.Tensor], sd: Dict[str, torch.Tensor], notes: List[str]):
    changes = {}
    for k, v in sd.items():
        if is_rel_pos_key(k) and k in own and v.dim() == 2 and v.shape[1] == own[k].shape[1] \
                and v.shape[0] != own[k].shape[0]:
            sd[k] = resize_rel_pos(v.float(), own[k].shape[0]).to(v.dtype)
            changes.setdefault((v.shape[0], own[k].shape[0]), []).append(k)
    for (old, new), keys in sorted(changes.items()):
        notes.append(f'{len(keys)} relative position tables resized linearly from {old} to {new} rows '
                     f'(another input size): {_collapse_blocks(keys)}')


def _collapse_blocks(keys) -> List[str]:
    """Keys with the block index replaced by '*', each once: 'blocks.*.attn.rel_pos_h'."""
    return sorted({re.sub(r'^(blocks(?:_token_only)?)\.\d+\.', r'\1.*.', k) for k in keys})


def _drop_keys(sd, prefix, notes, why):
    keys = [k for k in sd if _matches(k, prefix)]
    for k in keys:
        del sd[k]
    if keys:
        notes.append(f"'{prefix.rstrip('.')}' dropped: {why}")


def _adapt(model: nn.Module, sd: Dict[str, torch.Tensor], meta: dict, notes: List[str]) -> List[str]:
    """Adapt ``sd`` to ``model`` in place; returns the heads dropped for their size."""
    own = model.state_dict()
    _adapt_pos_embed(model, sd, meta, notes)
    _adapt_rel_pos(own, sd, notes)
    resized = []
    for head in ('head', 'head_dist'):
        w = f'{head}.weight'
        if w in sd and w in own and sd[w].shape != own[w].shape:
            _drop_keys(sd, f'{head}.', notes, f'the checkpoint has {sd[w].shape[0]} classes, the model '
                                              f'{own[w].shape[0]}; the model keeps a freshly initialised head')
            resized.append(head)
    for prefix in getattr(model, 'checkpoint_optional', ()):
        if not any(_matches(k, prefix) for k in own):
            why = f'{type(model).__name__} is built without it'
            if prefix == 'norm.' and any(k.startswith('fc_norm.') for k in own):
                why = 'the model normalises after average pooling instead (fc_norm), as MAE fine-tuning does'
            _drop_keys(sd, prefix, notes, why)
    return resized


def _num_blocks(keys) -> int:
    ids = [int(k.split('.')[1]) for k in keys if k.startswith('blocks.') and k.split('.')[1].isdigit()]
    return max(ids) + 1 if ids else 0


def _hints(missing, unexpected, ckpt_keys, model_keys, shapes=()) -> List[str]:
    def is_ls(k):
        return '.ls1.' in k or '.ls2.' in k or '.ls.' in k

    hints = []
    n_ckpt, n_model = _num_blocks(ckpt_keys), _num_blocks(model_keys)
    if n_ckpt != n_model:
        hints.append(f'the checkpoint has {n_ckpt} blocks, the model {n_model}: check depth / the variant name')
    if 'dist_token' in unexpected:
        hints.append('the checkpoint has a distillation token: use a *_distilled_* variant (distilled=True)')
    if 'dist_token' in missing:
        hints.append('the model has a distillation token the checkpoint lacks: use distilled=False')
    if 'norm.weight' in missing and 'fc_norm.weight' in ckpt_keys:
        hints.append("the checkpoint was fine-tuned with average pooling (fc_norm): pass global_pool='avg'")
    if unexpected and all(is_ls(k) for k in unexpected):
        hints.append('the checkpoint has LayerScale: pass init_values (DeiT III: 1e-4)')
    if missing and all(is_ls(k) for k in missing):
        hints.append('the checkpoint has no LayerScale: pass init_values=None')
    if any('.attns.' in k for k in ckpt_keys) != any('.attns.' in k for k in model_keys):
        hints.append('one side has parallel blocks, the other sequential ones: check num_parallel')
    if any(is_rel_pos_key(k) for k in unexpected):
        hints.append("the checkpoint has relative position biases (ViTDet's rel_pos_h / rel_pos_w): "
                     "pass use_rel_pos=True")
    if any(k.startswith('patch_embed.proj.0.') for k in ckpt_keys) != \
            any(k.startswith('patch_embed.proj.0.') for k in model_keys):
        hints.append("the stems differ: linear patch projection vs stem='hmlp'")
    if any('.linear_tokens.' in s for s in shapes):
        hints.append("ResMLP's cross-patch layers are sized for the checkpoint's token grid: build the model "
                     "with the img_size it was trained at (N x N weights for N patches)")
    return hints


def _listing(title, keys, limit=12):
    keys = sorted(keys)
    more = f' ... and {len(keys) - limit} more' if len(keys) > limit else ''
    return f'  {title} ({len(keys)}): {", ".join(keys[:limit])}{more}'


def _keep_first_blocks(model: nn.Module, sd: Dict[str, torch.Tensor], keep_blocks, notes: List[str]) -> None:
    """Drop from ``sd`` everything above the first ``keep_blocks`` blocks: the later blocks and what follows them
    (final norm, class-attention stage, head), by the layer ids of layer-wise decay (``get_layer_id``: 0 for the
    embedding, i + 1 for block i). The model keeps its fresh initialisation there."""
    depth = model.depth
    if isinstance(keep_blocks, bool) or not isinstance(keep_blocks, int) or not 0 <= keep_blocks <= depth:
        raise ValueError(f'keep_blocks={keep_blocks!r}: expected the number of leading blocks to load, a whole '
                         f'number from 0 to {depth} (the model has {depth} blocks)')
    above = [k for k in sd if model.get_layer_id(k) > keep_blocks]
    dropped = sorted({'.'.join(k.split('.')[:2]) if k.startswith(('blocks.', 'blocks_token_only.'))
                      else k.split('.')[0] for k in above}, key=lambda n: (n.split('.')[0], int(n.split('.')[-1]) if n[-1].isdigit() else 0))
    if keep_blocks == depth or not dropped:
        notes.append(f'keep_blocks={keep_blocks}: all {depth} blocks loaded')
        return
    for k in above:
        del sd[k]
    notes.append(f'keep_blocks={keep_blocks}: the embedding and blocks 0-{keep_blocks - 1} loaded, left freshly '
                 f'initialised: {dropped}' if keep_blocks else
                 f'keep_blocks=0: only the embedding loaded, left freshly initialised: {dropped}')


def load_checkpoint(model: nn.Module, checkpoint: str, prefix: Optional[str] = None,
                    verbose: bool = True, keep_blocks: Optional[int] = None) -> LoadReport:
    """Load ``checkpoint`` into ``model`` (a vitbench backbone of any family); see the module docstring.

    ``prefix`` selects a sub-module of the checkpoint (mmengine's ``Pretrained`` init_cfg option).
    ``keep_blocks``: load only the embedding and the first k blocks; later blocks, the final norm and the head
    keep the model's fresh initialisation (MAE-lite's keep-first-k-blocks experiment). The whole checkpoint is
    still checked against the model first.
    Returns a :class:`LoadReport` (detected format and notes); the notes are also logged.
    """
    ck = to_canonical(read_checkpoint(checkpoint), str(checkpoint), prefix)
    sd, notes = ck.state_dict, ck.notes
    broken = [k for k, v in sd.items() if torch.is_tensor(v) and v.is_floating_point() and not torch.isfinite(v).all()]
    if broken:  # e.g. the export of a training that diverged: it would train on NaN without a word
        raise CheckpointError(f'checkpoint {checkpoint}: {len(broken)} of its tensors hold NaN or inf (first: '
                              f'{broken[0]}); the training that wrote it diverged, and it cannot initialise a model')
    arch = getattr(model, 'arch', None)
    if ck.arch and arch and ck.arch != arch:
        notes.append(f'the file was saved from {ck.arch!r}, the model is {arch!r}')
    ckpt_keys = set(sd)
    resized_heads = _adapt(model, sd, ck.meta, notes)

    own = model.state_dict()
    shapes = [f'{k}: checkpoint {tuple(v.shape)} vs model {tuple(own[k].shape)}'
              for k, v in sd.items() if k in own and v.shape != own[k].shape]
    missing = [k for k in own if k not in sd and not k.endswith('num_batches_tracked')]
    unexpected = [k for k in sd if k not in own]
    may_miss = getattr(model, 'checkpoint_may_miss', ())
    fresh = [k for k in missing if any(_matches(k, p) for p in may_miss)]
    missing = [k for k in missing if k not in fresh]
    if missing or unexpected or shapes:
        name = f"{type(model).__name__} {arch!r}" if arch else type(model).__name__
        lines = [f'checkpoint {checkpoint} (format: {ck.source}) does not match {name}:']
        if missing:
            lines.append(_listing('missing from the checkpoint', missing))
        if unexpected:
            lines.append(_listing('unexpected in the checkpoint', unexpected))
        if shapes:
            lines.append(_listing('shape mismatches', shapes, limit=6))
        lines += [f'  hint: {h}' for h in _hints(missing, unexpected, ckpt_keys, set(own), shapes)]
        raise CheckpointError('\n'.join(lines))
    # modules by name (a fresh head), per-block parameters once for all blocks (relative position tables)
    fresh = sorted({k.rsplit('.', 1)[0] for k in fresh if not k.startswith('blocks.')} - set(resized_heads)) \
        + _collapse_blocks(k for k in fresh if k.startswith('blocks.'))
    if fresh:
        notes.append(f'not in the checkpoint, left freshly initialised: {fresh}')

    if keep_blocks is not None:
        _keep_first_blocks(model, sd, keep_blocks, notes)
    with torch.no_grad():
        model.load_state_dict(sd, strict=False)
    model.is_init = True  # mmengine must not re-initialise loaded weights (BaseModule.is_init)
    report = LoadReport(str(checkpoint), ck.source, notes)
    if verbose:
        print_log(f'loaded {checkpoint} ({ck.source})' + ''.join(f'\n  note: {n}' for n in notes),
                  logger='current')
    return report


def init_from_cfg(model: nn.Module) -> bool:
    """Apply a ``dict(type='Pretrained', checkpoint=..., prefix=..., keep_blocks=...)`` init_cfg with
    :func:`load_checkpoint`.

    Other init_cfg entries given alongside run first through mmengine. Returns False when there is no
    Pretrained entry (the caller then falls back to mmengine's default behaviour).
    """
    cfgs = model.init_cfg if isinstance(model.init_cfg, list) else [model.init_cfg] if model.init_cfg else []
    pretrained = [c for c in cfgs if c.get('type') in ('Pretrained', 'PretrainedInit')]
    if not pretrained:
        return False
    if len(pretrained) > 1:
        raise ValueError(f'init_cfg has {len(pretrained)} Pretrained entries; give one')
    others = [c for c in cfgs if c not in pretrained]
    if others:
        from mmengine.model import initialize
        initialize(model, others)
    cfg = pretrained[0]
    if 'checkpoint' not in cfg:
        raise ValueError(f"init_cfg {cfg} needs a 'checkpoint' path")
    load_checkpoint(model, cfg['checkpoint'], prefix=cfg.get('prefix'), keep_blocks=cfg.get('keep_blocks'))
    return True
