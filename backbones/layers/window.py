"""Windowed self-attention for high-resolution inputs, as in ViTDet (Li et al., 2022).

Patch tokens attend within non-overlapping ``window x window`` squares of the token grid (the grid is padded
to a multiple of the window; padded keys are masked out). Prefix tokens (class / distillation) are kept:
every window also attends to them, and they attend globally to all tokens. With these rules a window that
covers the whole grid is exactly global attention. With relative position biases (``attn.use_rel_pos``) the
patch tokens of a window get ViTDet's bias over the window x window grid; logits to and from prefix tokens
get none.
"""
from typing import Tuple

import torch
import torch.nn.functional as F

from .attention import Attention, add_bias


def _partition(x: torch.Tensor, window: int) -> torch.Tensor:
    """(B, Hp, Wp, ...) -> (B * nWh * nWw, window * window, ...)."""
    B, Hp, Wp = x.shape[:3]
    rest = x.shape[3:]
    x = x.view(B, Hp // window, window, Wp // window, window, *rest).transpose(2, 3)
    return x.reshape(-1, window * window, *rest)


def _unpartition(x: torch.Tensor, window: int, B: int, Hp: int, Wp: int) -> torch.Tensor:
    """Inverse of :func:`_partition` for (B * nW, window * window, C)."""
    C = x.shape[-1]
    x = x.view(B, Hp // window, Wp // window, window, window, C).transpose(2, 3)
    return x.reshape(B, Hp, Wp, C)


def window_attention(attn: Attention, x: torch.Tensor, grid: Tuple[int, int], window: int,
                     num_prefix_tokens: int) -> torch.Tensor:
    """Self-attention of ``attn`` over (B, P + H*W, C) tokens, restricted to windows as described above."""
    B, L, C = x.shape
    H, W = grid
    P, h, d = num_prefix_tokens, attn.num_heads, attn.head_dim
    qkv = attn.qkv(x).view(B, L, 3, h, d)

    out_prefix = None
    if P:
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(2))             # (B, h, L, d)
        out_prefix = attn.attend(q[:, :, :P], k, v)                      # (B, h, P, d), global
        k_prefix, v_prefix = k[:, :, :P], v[:, :, :P]

    pad_h, pad_w = (-H) % window, (-W) % window
    patches = qkv[:, P:].reshape(B, H, W, 3 * h * d)
    if pad_h or pad_w:
        patches = F.pad(patches, (0, 0, 0, pad_w, 0, pad_h))
    Hp, Wp = H + pad_h, W + pad_w
    windows = _partition(patches, window).view(-1, window * window, 3, h, d)
    q, k, v = (t.transpose(1, 2) for t in windows.unbind(2))            # (B*nW, h, w*w, d)
    n_win = windows.shape[0] // B
    if P:
        k = torch.cat([k_prefix.repeat_interleave(n_win, dim=0), k], dim=2)
        v = torch.cat([v_prefix.repeat_interleave(n_win, dim=0), v], dim=2)

    mask = None
    if pad_h or pad_w:
        valid = torch.zeros(1, Hp, Wp, 1, dtype=torch.bool, device=x.device)
        valid[:, :H, :W] = True
        valid = _partition(valid, window).view(n_win, window * window)
        valid = F.pad(valid, (P, 0), value=True)                         # prefix keys are always valid
        mask = valid.repeat(B, 1)[:, None, None, :]                      # (B*nW, 1, 1, P + w*w)
    if attn.use_rel_pos:
        # every window is a full window x window grid (padded tokens are masked as keys, cropped as queries)
        bias = F.pad(attn.rel_pos_bias(q, (window, window)), (P, 0))   # (B*nW, h, w*w, P + w*w)
        mask = add_bias(mask, bias)

    out = attn.attend(q, k, v, attn_mask=mask)                          # (B*nW, h, w*w, d)
    out = out.transpose(1, 2).reshape(-1, window * window, h * d)
    out = _unpartition(out, window, B, Hp, Wp)[:, :H, :W].reshape(B, H * W, h * d)
    if P:
        out = torch.cat([out_prefix.transpose(1, 2).reshape(B, P, h * d), out], dim=1)
    return attn.proj_drop(attn.proj(out))
