"""Absolute position embeddings at other resolutions."""
import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F


def resample_pos_embed(pos_embed: torch.Tensor, new_grid: Tuple[int, int], old_grid: Tuple[int, int],
                       num_prefix_tokens: int = 0) -> torch.Tensor:
    """Resize a (1, P + Ho*Wo, C) table to (1, P + Hn*Wn, C); the P prefix rows (class token...) are kept.

    Bicubic, ``align_corners=False``, no antialiasing: the interpolation of the official DeiT/MAE code
    (bilinear shrinks the embedding norm, which costs accuracy; DeiT §3.4).
    """
    new_grid, old_grid = tuple(new_grid), tuple(old_grid)
    if new_grid == old_grid:
        return pos_embed
    prefix, grid = pos_embed[:, :num_prefix_tokens], pos_embed[:, num_prefix_tokens:]
    if grid.shape[1] != old_grid[0] * old_grid[1]:
        raise ValueError(f'position embedding has {grid.shape[1]} grid rows, expected '
                         f'{old_grid[0]}x{old_grid[1]}={old_grid[0] * old_grid[1]}')
    C = grid.shape[-1]
    grid = grid.reshape(1, old_grid[0], old_grid[1], C).permute(0, 3, 1, 2)
    grid = F.interpolate(grid.float(), size=new_grid, mode='bicubic', align_corners=False).to(pos_embed.dtype)
    grid = grid.permute(0, 2, 3, 1).reshape(1, new_grid[0] * new_grid[1], C)
    return torch.cat([prefix, grid], dim=1)


def square_grid(num_tokens: int) -> Optional[Tuple[int, int]]:
    """(n, n) if ``num_tokens`` is a perfect square, else None."""
    n = math.isqrt(num_tokens)
    return (n, n) if n * n == num_tokens else None
