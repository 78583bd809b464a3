"""CaiT's two attention layers: talking-heads self-attention and class attention (Touvron et al., 2021).

Key names (``qkv``, ``proj_l``, ``proj_w``, ``proj``; ``q``, ``k``, ``v``, ``proj``) follow the official code.
"""
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from .attention import ATTN_KINDS, Attention, AttentionBase, fp32_on_cpu_autocast


def mix_heads(attn: torch.Tensor, linear: nn.Linear, scale: float = 1.) -> torch.Tensor:
    """Apply ``linear`` across the head dimension of (B, H, N, M) attention scores.

    The official code moves the heads last and calls the Linear: a GEMM with 4-16 wide rows over B*N*M of
    them plus two permuted copies of the maps, slow forward and backward. Here every image is one
    (H, H) @ (H, N*M) product on the maps as they lie (a single batched call with the weight broadcast).
    ``scale`` folds the q·kᵀ scaling into the (H, H) weight instead of touching q.
    """
    B, H, N, M = attn.shape
    weight = linear.weight * scale if scale != 1. else linear.weight
    out = torch.baddbmm(linear.bias.view(1, -1, 1), weight.expand(B, -1, -1), attn.reshape(B, H, N * M))
    return out.view(B, -1, N, M)


_NO_MASKS_OR_QUERY_SUBSETS = ('TalkingHeadAttention supports neither attention masks nor query subsets '
                              '(CaiT has no windowed attention and no prefix tokens in its trunk)')


class TalkingHeadAttention(Attention):
    """Self-attention whose heads exchange information before and after the softmax (Shazeer et al., 2020).

    The head mixing needs the full (N, N) score matrix, so this layer cannot use the fused SDPA kernel: it is
    :class:`Attention` (same ``qkv`` / ``proj``) with the explicit computation in :meth:`attend`.
    ``return_attn='logits'`` gives the mixed pre-softmax scores, ``'probs'`` the mixed weights applied to v.
    """

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = True, attn_drop: float = 0.,
                 proj_drop: float = 0.):
        super().__init__(dim, num_heads, qkv_bias, attn_drop, proj_drop)
        self.proj_l = nn.Linear(num_heads, num_heads)
        self.proj_w = nn.Linear(num_heads, num_heads)

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None,
                return_attn: Optional[str] = None, num_queries: Optional[int] = None):
        if attn_mask is not None or num_queries is not None:
            raise NotImplementedError(_NO_MASKS_OR_QUERY_SUBSETS)
        return super().forward(x, return_attn=return_attn)

    def attend(self, q, k, v, attn_mask=None, return_attn: Optional[str] = None):
        """Talking-heads attention of q over (k, v), all (B, heads, N, head_dim); returns out or (out, attn)."""
        if attn_mask is not None:  # e.g. from window_attention
            raise NotImplementedError(_NO_MASKS_OR_QUERY_SUBSETS)
        if return_attn is not None and return_attn not in ATTN_KINDS:
            raise ValueError(f"return_attn must be one of {ATTN_KINDS}, got {return_attn!r}")
        with fp32_on_cpu_autocast(q) as cast:
            q, k, v = cast(q), cast(k), cast(v)
            logits = mix_heads(q @ k.transpose(-2, -1), self.proj_l, self.scale)
            probs = mix_heads(logits.softmax(dim=-1), self.proj_w)
            out = F.dropout(probs, self.attn_drop, self.training) @ v
        if return_attn is None:
            return out
        return out, (logits if return_attn == 'logits' else probs)


class ClassAttention(AttentionBase):
    """Attention of the class token (first token) over all tokens; returns the class token update (B, 1, C).
    ``num_queries=n``: the first n tokens query (a class and a distillation token, thesis Table 3.14), (B, n, C);
    ``queries_in_keys=False``: they attend over the other tokens only (PatchConvNet's one class token per class,
    official ``Learned_Aggregation_Layer_multi``: the k class tokens query the patches, not each other)."""

    def make_input_projections(self, dim: int, qkv_bias: bool):
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.k = nn.Linear(dim, dim, bias=qkv_bias)
        self.v = nn.Linear(dim, dim, bias=qkv_bias)

    def split_heads(self, x: torch.Tensor, num_queries: int = 1, queries_in_keys: bool = True):
        """(B, N, C) -> q of the first ``num_queries`` tokens (B, heads, n, head_dim); k, v of all tokens
        (B, heads, N, head_dim), or of the N - n others without ``queries_in_keys``."""
        B, N, _ = x.shape
        q = self.q(x[:, :num_queries]).view(B, num_queries, self.num_heads, self.head_dim).transpose(1, 2)
        keys = x if queries_in_keys else x[:, num_queries:]
        k = self.k(keys).view(B, keys.shape[1], self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v(keys).view(B, keys.shape[1], self.num_heads, self.head_dim).transpose(1, 2)
        return q, k, v

    def forward(self, x: torch.Tensor, return_attn: Optional[str] = None, num_queries: int = 1,
                queries_in_keys: bool = True):
        return self.attend_and_merge(*self.split_heads(x, num_queries, queries_in_keys), return_attn=return_attn)
