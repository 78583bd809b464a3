"""What a token model's layers hold, for the analyses: one pass through the trunk yields, per layer,

* layer 0: the patch embedding (tokens plus position embeddings, the first block's input);
* layer i (1..depth): the output of block i, and block i's attention logits when asked;

each as the raw patch tokens (Fourier analysis) and normalised as the official MAE-lite CKA code takes them:
the next block's first LayerNorm of its input, the final norm (or ``fc_norm``) after the last block. Class and
distillation tokens are left out. Works for models with ``_trunk_input(x) -> (tokens, grid)`` and ``blocks``
(ViT family, CaiT's trunk, ResMLP); attention logits need blocks that return them (``return_attn``).
"""
import inspect
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
    if not (hasattr(model, '_trunk_input') and hasattr(model, 'blocks')):
        raise ValueError(f'{label or type(model).__name__}: {type(model).__name__} is not a token model '
                        '(ViT family, CaiT, ResMLP): the analyses read per-layer patch tokens')


def has_attention(model: nn.Module) -> bool:
    return all('return_attn' in inspect.signature(blk.forward).parameters for blk in model.blocks)


def _final_norm(model: nn.Module) -> nn.Module:
    for name in ('norm', 'fc_norm'):
        norm = getattr(model, name, None)
        if norm is not None and not isinstance(norm, nn.Identity):
            return norm
    return nn.Identity()


@torch.no_grad()
def walk_layers(model: nn.Module, x: torch.Tensor, attention: bool = False) -> Iterator[Layer]:
    """Yield :class:`Layer` 0..depth of ``model`` (eval mode) on images ``x``."""
    check_token_model(model)
    if attention and not has_attention(model):
        raise ValueError(f'{type(model).__name__} has no attention maps to analyse (its blocks do not return them)')
    prefix = getattr(model, 'num_prefix_tokens', 0)
    tokens, grid = model._trunk_input(x)
    grid = tuple(grid)
    blocks = list(model.blocks)

    def normed(i, t):
        norm = getattr(blocks[i], 'norm1', None) if i < len(blocks) else _final_norm(model)
        return (norm(t) if norm is not None else t)[:, prefix:]

    yield Layer(0, tokens[:, prefix:], normed(0, tokens), grid)
    for i, blk in enumerate(blocks):
        logits = None
        if attention:
            tokens, logits = blk(tokens, grid=grid, return_attn='logits')
        else:
            tokens = blk(tokens, grid=grid)
        yield Layer(i + 1, tokens[:, prefix:], normed(i + 1, tokens), grid, logits)
