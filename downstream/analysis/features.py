"""What a token model's layers hold, for the analyses: one pass through the trunk yields, per layer,

* layer 0: the patch embedding (tokens plus position embeddings, the first block's input);
* layer i (1..depth): the output of block i, and block i's attention logits when asked;

each as the raw patch tokens (Fourier analysis) and normalised as the official MAE-lite CKA code takes them:
the next block's first LayerNorm of its input, the final norm (or ``fc_norm``) after the last block. Class and
distillation tokens are left out. Works for the models that walk their blocks with ``iter_hidden``
(``backbones/block_walk.py``: ViT family, CaiT's trunk, ResMLP, PatchConvNet's trunk); where a block has no single
norm of tokens (parallel blocks: one per branch; PatchConvNet: BatchNorm of maps) the normalised representation is
the raw tokens. Attention logits need blocks that return them (``block_attention``).
"""
from dataclasses import dataclass
from typing import Iterator, Optional, Tuple

import torch
from torch import nn


@dataclass
class Layer:
    index: int  # 0: patch embedding, i: after block i
    raw: torch.Tensor  # (B, P, C) patch tokens
    normed: torch.Tensor  # (B, P, C)
    grid: Tuple[int, int]
    attn_logits: Optional[torch.Tensor] = None  # (B, heads, N, N) of block ``index`` (N counts prefix tokens)


def check_token_model(model: nn.Module, label: str = '') -> None:
    if not hasattr(model, 'iter_hidden'):
        raise ValueError(f'{label or type(model).__name__}: {type(model).__name__} is not a token model '
                        '(ViT family, CaiT, ResMLP, PatchConvNet): the analyses read per-layer patch tokens')


def has_attention(model: nn.Module) -> bool:
    return model.block_attention


@torch.no_grad()
def walk_layers(model: nn.Module, x: torch.Tensor, attention: bool = False) -> Iterator[Layer]:
    """Yield :class:`Layer` 0..depth of ``model`` (eval mode) on images ``x``."""
    check_token_model(model)
    if attention and not has_attention(model):
        raise ValueError(f'{type(model).__name__} has no attention maps to analyse (its blocks do not return them)')
    for h in model.iter_hidden(x, attn_indices=range(model.depth) if attention else (), attn_kind='logits'):
        # no single norm of tokens (parallel blocks, PatchConvNet's map norms): the raw tokens
        normed = h.normed() if h.norm is not None else h.tokens
        yield Layer(h.index, h.patches(), normed[:, h.num_prefix_tokens:], h.grid, h.attn)
