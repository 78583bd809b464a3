"""BEiT's block-wise masking (pretrain/block_masking.py): its statistics at BEiT's setting (75 of 14 x 14 patches,
blocks of at least 16) against what the algorithm guarantees, and against uniform random masking of as many."""
import numpy as np
import pytest
from scipy import ndimage

from pretrain.block_masking import BlockMasking


def _masks(n=300, **kwargs):
    gen = BlockMasking(14, 75, min_num_patches=16, seed=0, **kwargs)
    return np.stack([gen() for _ in range(n)])


def test_never_more_than_the_target_and_almost_always_exactly_it():
    masks = _masks()
    counts = masks.reshape(len(masks), -1).sum(1)
    assert counts.max() == 75 and set(np.unique(masks)) == {0, 1}
    assert (counts == 75).mean() > 0.6 and counts.mean() > 74  # a block that overshoots is redrawn, 10 tries


def test_masks_are_blocks_not_scattered_patches():
    """A few large connected regions, where uniform masking of 75 patches makes dozens of small ones."""
    masks = _masks()
    regions = np.mean([ndimage.label(m)[1] for m in masks])
    rng = np.random.default_rng(0)
    uniform = np.zeros((300, 196), dtype=int)
    for row in uniform:
        row[rng.choice(196, 75, replace=False)] = 1
    uniform_regions = np.mean([ndimage.label(m.reshape(14, 14))[1] for m in uniform])
    assert regions < 4 < 10 < uniform_regions


def test_no_side_is_favoured_and_the_centre_is_masked_most():
    """The aspect ratio is log-uniform in [0.3, 1/0.3] and blocks are placed uniformly: rows and columns are
    masked alike (the mean mask is symmetric under transposition). Blocks must fit strictly inside the grid, so
    the corners are masked least and the centre most, yet every patch can be."""
    freq = _masks(600).mean(0)
    assert np.abs(freq - freq.T).max() < 0.12 and 0 < freq.min() == min(freq[0, 0], freq[0, -1], freq[-1, 0],
                                                                          freq[-1, -1]) < 0.1 < 0.3 < freq[7, 7]
    assert freq.mean() == pytest.approx(75 / 196, abs=0.01)


def test_seeded_and_checked():
    assert (BlockMasking(14, 75, seed=3)() == BlockMasking(14, 75, seed=3)()).all()
    with pytest.raises(ValueError, match='num_masking_patches'):
        BlockMasking(14, 200)
