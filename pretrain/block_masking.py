"""BEiT's block-wise masking (Bao et al., ICLR 2022, Algorithm 1; the ``MaskingGenerator`` of microsoft/unilm
beit/masking_generator.py): the masked patches of a BEiT pre-training image are rectangles of patches, added one
at a time until ``num_masking_patches`` are masked.

Each block draws an area uniformly in [min_num_patches, the patches still to mask (at most max_num_patches)] and
a log-uniform aspect ratio in [min_aspect, 1 / min_aspect]; its sides are the rounded sqrt(area · ratio) and
sqrt(area / ratio). A block that fits strictly inside the grid is placed uniformly and kept when it adds at least
one new patch and no more than still to mask; up to 10 draws per block. Masking stops at the target, or when 10
draws in a row add nothing. So a mask never exceeds the target and, at BEiT's setting (75 of 14 x 14, blocks of
at least 16), almost always reaches it.

BEiT pre-training's values: ``BlockMasking(14, 75, min_num_patches=16)`` (run_beit_pretraining.py defaults
``--num_mask_patches 75 --min_mask_patches_per_block 16``, ``max_mask_patches_per_block`` None, aspect 0.3).
"""
import math
import random
from typing import Optional, Tuple, Union

import numpy as np


class BlockMasking:
    """``mask = BlockMasking(grid, n)()``: an (H, W) array of 0 / 1 (1 = masked), block-wise as BEiT."""

    def __init__(self, input_size: Union[int, Tuple[int, int]], num_masking_patches: int,
                 min_num_patches: int = 4, max_num_patches: Optional[int] = None, min_aspect: float = 0.3,
                 max_aspect: Optional[float] = None, seed: Optional[int] = None):
        self.height, self.width = (input_size, input_size) if isinstance(input_size, int) else tuple(input_size)
        if not 0 < num_masking_patches <= self.height * self.width:
            raise ValueError(f'num_masking_patches must be in [1, {self.height * self.width}] for a '
                             f'{self.height}x{self.width} grid, got {num_masking_patches}')
        if min_aspect <= 0:
            raise ValueError(f'min_aspect must be > 0, got {min_aspect}')
        self.num_masking_patches = num_masking_patches
        self.min_num_patches = min_num_patches
        self.max_num_patches = num_masking_patches if max_num_patches is None else max_num_patches
        max_aspect = max_aspect or 1 / min_aspect
        self.log_aspect_ratio = (math.log(min_aspect), math.log(max_aspect))
        self.rng = random.Random(seed)

    def _add_block(self, mask: np.ndarray, max_patches: int) -> int:
        """Try up to 10 blocks; the first that adds patches (no more than ``max_patches``) is kept. Returns
        how many patches it added (0: none fitted)."""
        for _ in range(10):
            area = self.rng.uniform(self.min_num_patches, max_patches)
            ratio = math.exp(self.rng.uniform(*self.log_aspect_ratio))
            h, w = int(round(math.sqrt(area * ratio))), int(round(math.sqrt(area / ratio)))
            if not (w < self.width and h < self.height):
                continue
            top, left = self.rng.randint(0, self.height - h), self.rng.randint(0, self.width - w)
            window = mask[top:top + h, left:left + w]
            new = h * w - int(window.sum())
            if 0 < new <= max_patches:
                window[...] = 1
                return new
        return 0

    def __call__(self) -> np.ndarray:
        mask = np.zeros((self.height, self.width), dtype=np.int64)
        count = 0
        while count < self.num_masking_patches:
            added = self._add_block(mask, min(self.num_masking_patches - count, self.max_num_patches))
            if added == 0:
                break
            count += added
        return mask
