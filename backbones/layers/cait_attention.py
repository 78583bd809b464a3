"""CaiT's two attention layers: talking-heads self-attention and class attention (Touvron et al., 2021).

Key names (``qkv``, ``proj_l``, ``proj_w``, ``proj``; ``q``, ``k``, ``v``, ``proj``) follow the official code.
"""
from typing import Optional

import torch
from torch import nn

from .attention import ATTN_KINDS, explicit_attention, fp32_on_cpu_autocast, sdpa


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


class TalkingHeadAttention(nn.Module):
    """Self-attention whose heads exchange information before and after the softmax (Shazeer et al., 2020).

    The head mixing needs the full (N, N) score matrix, so this layer cannot use the fused SDPA kernel.
    ``return_attn='logits'`` gives the mixed pre-softmax scores, ``'probs'`` the mixed weights applied to v.
    """

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = True, attn_drop: float = 0.,
                 proj_drop: float = 0.):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f'dim={dim} is not divisible by num_heads={num_heads}')
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_l = nn.Linear(num_heads, num_heads)
        self.proj_w = nn.Linear(num_heads, num_heads)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x: torch.Tensor, attn_mask: Optional[torch.Tensor] = None,
                return_attn: Optional[str] = None, num_queries: Optional[int] = None):
        if attn_mask is not None or num_queries is not None:
            raise NotImplementedError('TalkingHeadAttention supports neither attention masks nor query '
                                      'subsets (CaiT has no windowed attention and no prefix tokens in its trunk)')
        if return_attn is not None and return_attn not in ATTN_KINDS:
            raise ValueError(f"return_attn must be one of {ATTN_KINDS}, got {return_attn!r}")
        B, N, C = x.shape
        q, k, v = (t.transpose(1, 2) for t in self.qkv(x).view(B, N, 3, self.num_heads, self.head_dim).unbind(2))
        with fp32_on_cpu_autocast(q) as cast:
            q, k, v = cast(q), cast(k), cast(v)
            logits = mix_heads(q @ k.transpose(-2, -1), self.proj_l, self.scale)
            probs = mix_heads(logits.softmax(dim=-1), self.proj_w)
            x = (self.attn_drop(probs) @ v).transpose(1, 2).reshape(B, N, C)
        x = self.proj_drop(self.proj(x))
        if return_attn is None:
            return x
        return x, (logits if return_attn == 'logits' else probs)


class ClassAttention(nn.Module):
    """Attention of the class token (first token) over all tokens; returns the class token update (B, 1, C)."""

    def __init__(self, dim: int, num_heads: int = 8, qkv_bias: bool = True, attn_drop: float = 0.,
                 proj_drop: float = 0.):
        super().__init__()
        if dim % num_heads:
            raise ValueError(f'dim={dim} is not divisible by num_heads={num_heads}')
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.q = nn.Linear(dim, dim, bias=qkv_bias)
        self.k = nn.Linear(dim, dim, bias=qkv_bias)
        self.v = nn.Linear(dim, dim, bias=qkv_bias)
        self.attn_drop = attn_drop
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x: torch.Tensor, return_attn: Optional[str] = None):
        B, N, C = x.shape
        q = self.q(x[:, :1]).view(B, 1, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(B, N, self.num_heads, self.head_dim).transpose(1, 2)
        dropout_p = self.attn_drop if self.training else 0.
        if return_attn is None:
            out, attn = sdpa(q, k, v, dropout_p=dropout_p), None
        else:
            out, attn = explicit_attention(q, k, v, self.scale, None, dropout_p, return_attn)
        out = self.proj_drop(self.proj(out.transpose(1, 2).reshape(B, 1, C)))
        return out if attn is None else (out, attn)
