"""Which backbone parameters a fine-tuning run trains: all, attention only, FFN only, or the head only (linear
probe).

Attention-only ("Three things everyone should know about ViTs", §4; official ``main.py --attn-only``)
trains:
  * the attention layers of every block, ``blocks.<i>.attn.{qkv,proj}`` — and of *every branch* of parallel
    blocks (``blocks.<i>.attns.<j>.attn.*``; the official name filter ``'.attn.'`` missed the second
    branch ``attn1``) and CaiT's class-attention blocks (``blocks_token_only.<j>.attn.*``);
  * ``pos_embed`` (it must adapt when the resolution changes, e.g. 224 -> 384);
  * the classifier ``head`` (and ``head_dist`` of distilled models).
Frozen: the patch embedding (stem), class/distillation tokens, every LayerNorm (``norm1``, ``norm2``, the
final ``norm`` / ``fc_norm``), the MLPs and the LayerScale factors.

FFN-only (the "Three things" §4 / Tables 5 and 6 counterpart of attention-only) trains:
  * the MLP of every block, ``blocks.<i>.mlp.{fc1,fc2}``, of *every branch* of parallel blocks
    (``blocks.<i>.ffns.<j>.mlp.*``) and of CaiT's class-attention blocks (``blocks_token_only.<j>.mlp.*``);
  * ``pos_embed`` and the ``head`` (+ ``head_dist``), as attention-only does, so that the two modes differ only
    in which sub-layer they train (the paper does not list what else its FFN-only runs trained).
Frozen: everything else, attention included.

A linear probe trains ``head`` (and ``head_dist``) only. Frozen BatchNorm layers (hMLP stem) are kept in
eval mode so their running statistics stay those of the checkpoint.
"""
import re
from typing import List

from torch import nn

from vitbench.compat.torch import is_batch_norm

TRAINABLE = ('all', 'attention', 'ffn', 'linear')
_HEADS = r'head(_dist)?\.'
_PATTERNS = {
    'attention': re.compile(r'(^|\.)attn\.|^pos_embed$|^' + _HEADS),
    'ffn': re.compile(r'(^|\.)mlp\.|^pos_embed$|^' + _HEADS),
    'linear': re.compile('^' + _HEADS),
}


def trainable_names(model: nn.Module, trainable: str) -> List[str]:
    """Names of the parameters of ``model`` (a vitbench ViT / CaiT) that ``trainable`` leaves trainable."""
    if trainable not in TRAINABLE:
        raise ValueError(f'trainable must be one of {TRAINABLE}, got {trainable!r}')
    names = [n for n, _ in model.named_parameters()]
    if trainable == 'all':
        return names
    return [n for n in names if _PATTERNS[trainable].search(n)]


def apply_trainable(model: nn.Module, trainable: str) -> List[str]:
    """Freeze every parameter of ``model`` that ``trainable`` does not train; returns the trained names. A
    parameter the model froze itself stays frozen (the fixed LayerScale of CaiT §4.1, ``residual_scale_trainable``)."""
    keep = set(trainable_names(model, trainable))
    if not keep:
        raise ValueError(f"trainable='{trainable}' matches no parameter of {type(model).__name__}")
    for name, param in model.named_parameters():
        if name not in keep:
            param.requires_grad_(False)
    return sorted(n for n, p in model.named_parameters() if n in keep and p.requires_grad)


def keep_frozen_norms_in_eval(model: nn.Module) -> None:
    """Put BatchNorm layers whose parameters are all frozen back into eval mode (call after ``train()``)."""
    for m in model.modules():
        if is_batch_norm(m) and not any(p.requires_grad for p in m.parameters()):
            m.eval()
