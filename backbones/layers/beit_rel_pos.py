"""BEiT's relative position bias (Bao et al., 2022; microsoft/unilm ``beit``, which MAE turns on for its ADE20k
transfer and mmsegmentation's MAE backbone has in every block): one learned scalar per head for each relative
offset between two patch tokens of an H x W grid, plus three for the class token (class -> patch, patch -> class,
class -> class), added to the scaled attention logits.

A layer holds ``relative_position_bias_table`` ((2H - 1)(2W - 1) + 3, heads), BEiT's name. Row
``(dy + H - 1) * (2W - 1) + (dx + W - 1)`` is the offset (dy, dx) = query - key; the last three rows are the
class token's (BEiT's ``num_relative_distance - 3``, ``- 2``, ``- 1``). The table starts at zero, as BEiT and MAE
fine-tune from checkpoints that lack it: the layer then computes what it computed without it.

A grid smaller than the table's (a slide-inference crop at an image border) reads the rows of its own offsets,
which the table holds; a larger one has offsets the table never learned and is refused.
"""
import functools
from typing import Tuple

import torch

BEIT_TABLE = 'relative_position_bias_table'  # the parameter name (BEiT's, timm's, mmsegmentation's)


def beit_table_rows(size: Tuple[int, int]) -> int:
    h, w = size
    return (2 * h - 1) * (2 * w - 1) + 3


@functools.lru_cache(maxsize=32)
def beit_index(size: Tuple[int, int], grid: Tuple[int, int], num_prefix_tokens: int) -> torch.Tensor:
    """The table row of every (query, key) pair of ``num_prefix_tokens`` (0 or 1: the class token) prefix tokens
    then the patch tokens of ``grid`` in row-major order, for a table of ``size`` = (H, W): (L, L) long."""
    H, W = size
    h, w = grid
    if h > H or w > W:
        raise ValueError(f'a {h}x{w} token grid is larger than the {H}x{W} grid the relative position bias table '
                         'was built for (backbone img_size): its offsets have no row')
    if num_prefix_tokens not in (0, 1):
        raise ValueError(f"BEiT's relative position bias has rows for one class token; this model has "
                         f'{num_prefix_tokens} prefix tokens')
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
    ys, xs = ys.flatten(), xs.flatten()
    dy = ys[:, None] - ys[None, :] + H - 1
    dx = xs[:, None] - xs[None, :] + W - 1
    patches = dy * (2 * W - 1) + dx
    if not num_prefix_tokens:
        return patches
    rows = beit_table_rows(size)
    index = torch.empty(h * w + 1, h * w + 1, dtype=torch.long)
    index[1:, 1:] = patches
    index[0, :] = rows - 3  # class token -> patches
    index[:, 0] = rows - 2  # patches -> class token
    index[0, 0] = rows - 1
    return index


def beit_bias(table: torch.Tensor, size: Tuple[int, int], grid: Tuple[int, int],
              num_prefix_tokens: int) -> torch.Tensor:
    """The bias (heads, L, L) a table gives the tokens of ``grid``."""
    index = beit_index(tuple(size), tuple(grid), num_prefix_tokens).to(table.device)
    L = index.shape[0]
    return table[index.view(-1)].view(L, L, -1).permute(2, 0, 1)
