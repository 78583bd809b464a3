"""Multi-head self-attention through ``F.scaled_dot_product_attention``.

The fused kernel never materialises the (N, N) attention matrix. Callers that need it (attention
distillation matches the last block's pre-softmax logits; analysis tools look at the softmax maps) ask for it
with ``return_attn='logits' | 'probs'``, which switches to the explicit computation for that call only.
"""
from typing import Optional, Tuple

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

from .beit_rel_pos import beit_bias, beit_table_rows
from .rel_pos import decomposed_rel_pos_bias

ATTN_KINDS = ('logits', 'probs')


def _is_cpu_bf16_autocast(x: torch.Tensor) -> bool:
    return x.is_cpu and x.dtype == torch.bfloat16 and torch.is_autocast_enabled('cpu')


@contextlib.contextmanager
def fp32_on_cpu_autocast(x: torch.Tensor):
    """Inside: autocast off and ``cast`` = ``.float()`` when ``x`` is a bf16 CPU tensor under CPU autocast;
    otherwise nothing changes (``cast`` = identity)."""
    if _is_cpu_bf16_autocast(x):
        with torch.autocast('cpu', enabled=False):
            yield lambda t: t.float()
    else:
        yield lambda t: t


# Longest key sequence whose attention CPU autocast training computes explicitly in bf16. The explicit form keeps
# two (queries x keys) matrices per head for the backward: at 1024 keys (512² crops at patch 16) that is about
# as much memory as the rest of a block's activations; far longer sequences would multiply it.
EXPLICIT_BF16_MAX_KEYS = 1024


def sdpa(q, k, v, attn_mask=None, dropout_p: float = 0.):
    """``F.scaled_dot_product_attention``, except under CPU autocast when a backward pass will follow.

    torch's CPU flash-attention backward is ~2.5x slower in bf16 than in fp32 (torch 2.14, AMX Xeon), while
    the plain ``softmax(q·kᵀ)·v`` in bf16 runs its two products on the bf16 matrix units and is the fastest
    of the three (DeiT-S block: 12 ms vs 19 ms fp32 flash vs 31 ms bf16 flash, forward + backward). It keeps
    the attention matrices for the backward, so it is used up to ``EXPLICIT_BF16_MAX_KEYS`` keys (classification
    resolutions, 512² segmentation crops, ViTDet's windows); longer sequences (ViTDet's global blocks) run the
    fp32 flash kernel, which never materialises them. Like flash attention on GPUs, the explicit path keeps
    the probabilities in bf16 and accumulates the products in fp32."""
    if q.requires_grad and torch.is_grad_enabled() and _is_cpu_bf16_autocast(q):
        if k.shape[-2] <= EXPLICIT_BF16_MAX_KEYS:
            return explicit_attention(q, k, v, q.shape[-1] ** -0.5, attn_mask, dropout_p)[0]
        with fp32_on_cpu_autocast(q) as cast:
            if attn_mask is not None and attn_mask.is_floating_point():
                attn_mask = cast(attn_mask)  # an additive bias must have the query's dtype
            return F.scaled_dot_product_attention(cast(q), cast(k), cast(v), attn_mask=attn_mask,
                                                  dropout_p=dropout_p)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p)


def add_bias(attn_mask: Optional[torch.Tensor], bias: torch.Tensor) -> torch.Tensor:
    """An additive float ``bias`` combined with an SDPA ``attn_mask`` (None, boolean True = may attend, or
    float): the single float mask SDPA takes."""
    if attn_mask is None:
        return bias
    if attn_mask.dtype == torch.bool:
        return bias.masked_fill(~attn_mask, float('-inf'))
    return bias + attn_mask


def explicit_attention(q, k, v, scale, attn_mask=None, dropout_p=0., return_attn='probs'):
    """``softmax(q·kᵀ·scale) @ v`` spelled out; returns ``(out, logits or probs)``.

    ``attn_mask`` follows SDPA's convention: boolean True = may attend, or an additive float bias.
    """
    if return_attn not in ATTN_KINDS:
        raise ValueError(f"return_attn must be one of {ATTN_KINDS}, got {return_attn!r}")
    logits = (q * scale) @ k.transpose(-2, -1)
    if attn_mask is not None:
        logits = logits.masked_fill(~attn_mask, float('-inf')) if attn_mask.dtype == torch.bool \
            else logits + attn_mask
    probs = logits.softmax(dim=-1)
    out = (F.dropout(probs, dropout_p) if dropout_p else probs) @ v
    return out, (logits if return_attn == 'logits' else probs)


class AttentionBase(nn.Module):
    """What the attention layers share: ``num_heads`` heads of ``dim // num_heads`` channels, attention through
    SDPA (spelled out when the maps are asked for) and the output projection ``proj``.

    Subclasses make their q, k, v projections in ``make_input_projections`` and cut tokens into heads in
    ``split_heads``.
    """
    use_rel_pos = False  # relative position biases (only :class:`Attention` has them)

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = True, attn_drop: float = 0.,
                 proj_drop: float = 0.):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f'dim={dim} is not divisible by num_heads={num_heads}')
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        # before ``proj``: the module order is the state-dict order and the order of the seeded init
        self.make_input_projections(dim, qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def make_input_projections(self, dim: int, qkv_bias: bool):
        """Register the q, k, v projection(s) under the key names of the official checkpoints."""
        raise NotImplementedError

    def attend(self, q, k, v, attn_mask=None, return_attn: Optional[str] = None):
        """Attention of q over (k, v), all (B, heads, L, head_dim); returns out or (out, attn)."""
        dropout_p = self.attn_drop if self.training else 0.
        if return_attn is None:
            return sdpa(q, k, v, attn_mask, dropout_p)
        return explicit_attention(q, k, v, self.scale, attn_mask, dropout_p, return_attn)

    def merge_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, heads, N, head_dim) -> projected (B, N, C)."""
        B, _, N, _ = x.shape
        return self.proj_drop(self.proj(x.transpose(1, 2).reshape(B, N, -1)))

    def attend_and_merge(self, q, k, v, attn_mask=None, return_attn: Optional[str] = None):
        """:meth:`attend`, then :meth:`merge_heads` on its output; returns out or (out, attn)."""
        out = self.attend(q, k, v, attn_mask, return_attn)
        if return_attn is None:
            return self.merge_heads(out)
        out, attn = out
        return self.merge_heads(out), attn


class Attention(AttentionBase):
    """Self-attention with a fused qkv projection (keys ``qkv``, ``proj`` as in timm and the official code).

    ``rel_pos_size=(H, W)`` adds ViTDet's decomposed relative position biases (``rel_pos.py``) between patch
    tokens, with tables ``rel_pos_h`` (2H - 1, head_dim) and ``rel_pos_w`` (2W - 1, head_dim) for an H x W
    attention grid (a window, or the whole token grid of a global block; other grids interpolate the tables).
    They start at zero, as detectron2's ``rel_pos_zero_init``: the layer then computes what it computed
    without them, so pretrained weights start unchanged. The bias reaches SDPA as a float ``attn_mask``.
    ``rel_pos_kind='beit'`` holds BEiT's bias instead (``beit_rel_pos.py``): one table
    ``relative_position_bias_table`` ((2H - 1)(2W - 1) + 3, heads) of per-head scalars, the class token's
    included, also zero-initialised.
    """

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = True, attn_drop: float = 0.,
                 proj_drop: float = 0., rel_pos_size: Optional[Tuple[int, int]] = None,
                 rel_pos_kind: str = 'decomposed'):
        super().__init__(dim, num_heads, qkv_bias, attn_drop, proj_drop)
        if rel_pos_kind not in ('decomposed', 'beit'):
            raise ValueError(f"rel_pos_kind must be 'decomposed' (ViTDet) or 'beit', got {rel_pos_kind!r}")
        self.rel_pos_size = None if rel_pos_size is None else tuple(rel_pos_size)
        self.rel_pos_kind = rel_pos_kind
        self.use_rel_pos = self.rel_pos_size is not None
        if self.use_rel_pos:
            h, w = self.rel_pos_size
            if h < 1 or w < 1:
                raise ValueError(f'rel_pos_size must be a positive grid (H, W), got {rel_pos_size}')
            if rel_pos_kind == 'beit':
                self.relative_position_bias_table = nn.Parameter(
                    torch.zeros(beit_table_rows(self.rel_pos_size), num_heads))
            else:
                self.rel_pos_h = nn.Parameter(torch.zeros(2 * h - 1, self.head_dim))
                self.rel_pos_w = nn.Parameter(torch.zeros(2 * w - 1, self.head_dim))

    def rel_pos_bias(self, q: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """The bias (..., H*W, H*W) among the patch tokens of an H x W ``grid``, from their unscaled queries
        q (..., H*W, head_dim) in row-major order."""
        return decomposed_rel_pos_bias(q, self.rel_pos_h, self.rel_pos_w, grid, grid)

    def make_input_projections(self, dim: int, qkv_bias: bool):
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)

    def split_heads(self, x: torch.Tensor):
        """(B, N, C) -> q, k, v, each (B, heads, N, head_dim) views into one qkv projection.

        Unbinding the (B, N, 3, heads, head_dim) view along dim 2 (not a permuted copy's leading dim) makes
        the backward stack the three gradients straight into the qkv layout: one copy fewer per block.
        """
        B, N, _ = x.shape
        q, k, v = self.qkv(x).view(B, N, 3, self.num_heads, self.head_dim).unbind(2)
        return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None,
                return_attn: Optional[str] = None, num_queries: Optional[int] = None,
                grid: Optional[Tuple[int, int]] = None, num_prefix_tokens: int = 0):
        """``num_queries``: only the first n tokens query (all tokens are keys / values); output (B, n, C).

        With relative position biases, x is ``num_prefix_tokens`` prefix tokens then the patch tokens of the
        H x W ``grid``. Only patch-patch logits get a bias: ViTDet has no class token in its attention, and
        prefix tokens have no position on the grid.
        """
        q, k, v = self.split_heads(x)
        P = num_prefix_tokens
        if self.use_rel_pos and self.rel_pos_kind == 'beit':  # every token, the class token's rows included
            if grid is None:
                raise ValueError('relative position biases need the token grid: call the block as '
                                 'blk(x, grid=(H, W))')
            bias = beit_bias(self.relative_position_bias_table, self.rel_pos_size, grid, P)[None].to(q.dtype)
            attn_mask = add_bias(attn_mask, bias[:, :, :num_queries])
        elif self.use_rel_pos and (num_queries is None or num_queries > P):  # prefix queries get no bias
            if grid is None:
                raise ValueError('relative position biases need the token grid: call the block as '
                                 'blk(x, grid=(H, W))')
            bias = F.pad(self.rel_pos_bias(q[:, :, P:], grid), (P, 0, P, 0))  # (B, heads, L, L)
            attn_mask = add_bias(attn_mask, bias[:, :, :num_queries])  # the rows of the queries kept below
        if num_queries is not None:
            q = q[:, :, :num_queries]
        return self.attend_and_merge(q, k, v, attn_mask, return_attn)
