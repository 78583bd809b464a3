"""Decomposed relative position biases (MViTv2, Li et al., 2022), as ViTDet uses them (detectron2
``modeling/backbone/utils.py``: ``get_rel_pos``, ``add_decomposed_rel_pos``).

A layer holds one table per axis, ``rel_pos_h`` (2 * H - 1, head_dim) and ``rel_pos_w`` (2 * W - 1, head_dim),
for an H x W attention grid: row ``dy + H - 1`` embeds a vertical offset ``dy`` between query and key. The bias
of query (i, j) on key (k, l) is ``q · Rh[i - k] + q · Rw[j - l]`` with the *unscaled* query q, added to the
scaled logits ``(q * scale) · k``: detectron2's ``attn = (q * scale) @ k.T`` followed by
``add_decomposed_rel_pos(attn, q, ...)``.
"""
from typing import Tuple

import torch
import torch.nn.functional as F

REL_POS_NAMES = ('rel_pos_h', 'rel_pos_w')  # the tables' parameter names (detectron2's)


def is_rel_pos_key(name: str) -> bool:
    """Whether a state-dict key names a relative-position table (ViTDet's, or BEiT's
    ``relative_position_bias_table``)."""
    return name.rsplit('.', 1)[-1] in (*REL_POS_NAMES, 'relative_position_bias_table')


def resize_rel_pos(rel_pos: torch.Tensor, length: int) -> torch.Tensor:
    """A table (L, C) linearly interpolated to (length, C) along the offsets, channel by channel."""
    if rel_pos.shape[0] == length:
        return rel_pos
    return F.interpolate(rel_pos.t()[None], size=length, mode='linear')[0].t()


def get_rel_pos(q_size: int, k_size: int, rel_pos: torch.Tensor) -> torch.Tensor:
    """The embeddings (q_size, k_size, C) of every query-key offset along one axis, read from a table (L, C).

    A table of another length than ``2 * max(q_size, k_size) - 1`` (a global block at another input size than
    it was built for) is first resized by linear interpolation, as detectron2 does; query and key coordinates
    are scaled to the longer of the two when their sizes differ.
    """
    rel_pos = resize_rel_pos(rel_pos, 2 * max(q_size, k_size) - 1)
    q_scale, k_scale = max(k_size / q_size, 1.0), max(q_size / k_size, 1.0)
    q_coords = torch.arange(q_size, device=rel_pos.device)[:, None] * q_scale
    k_coords = torch.arange(k_size, device=rel_pos.device)[None, :] * k_scale
    offsets = (q_coords - k_coords) + (k_size - 1) * k_scale  # query - key, shifted to start at row 0
    return rel_pos[offsets.long()]


def decomposed_rel_pos_bias(q: torch.Tensor, rel_pos_h: torch.Tensor, rel_pos_w: torch.Tensor,
                            q_size: Tuple[int, int], k_size: Tuple[int, int]) -> torch.Tensor:
    """The additive attention bias (..., q_h * q_w, k_h * k_w) of queries ``q`` (..., q_h * q_w, C), whose
    tokens (and the keys') are in row-major order on their grids; ``q`` is the unscaled query."""
    (q_h, q_w), (k_h, k_w) = q_size, k_size
    if q.shape[-2] != q_h * q_w:
        raise ValueError(f'relative position bias: {q.shape[-2]} queries do not form the {q_h}x{q_w} grid')
    Rh = get_rel_pos(q_h, k_h, rel_pos_h).to(q.dtype)  # (q_h, k_h, C)
    Rw = get_rel_pos(q_w, k_w, rel_pos_w).to(q.dtype)  # (q_w, k_w, C)
    r_q = q.reshape(*q.shape[:-2], q_h, q_w, q.shape[-1])
    rel_h = torch.einsum('...hwc,hkc->...hwk', r_q, Rh)  # (..., q_h, q_w, k_h): query row vs key row
    rel_w = torch.einsum('...hwc,wkc->...hwk', r_q, Rw)  # (..., q_h, q_w, k_w): query column vs key column
    bias = rel_h[..., :, None] + rel_w[..., None, :]     # (..., q_h, q_w, k_h, k_w)
    return bias.reshape(*q.shape[:-2], q_h * q_w, k_h * k_w)
