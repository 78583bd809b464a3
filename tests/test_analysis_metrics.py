"""The analyses' metrics on cases with a known answer: CKA (Nguyen et al.'s unbiased minibatch estimator),
attention distance and entropy (MAE-lite Eqs. 1-2), the Fourier Δ log amplitude (Park & Kim)."""
import itertools
import math

import numpy as np
import pytest
import torch

from downstream.analysis.attention_stats import (AttentionStats, attention_distance, attention_entropy,
                                                 patch_attention, patch_distances)
from downstream.analysis.cka import MinibatchCKA, gram_matrices, hsic_unbiased, linear_cka
from downstream.analysis.fourier import (EPS, FourierStats, diagonal_frequencies, log_amplitude_diagonal,
                                         relative_log_amplitude)


def _features(n=64, d=40, seed=0):
    return torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# ---------------------------------------------------------------------------------------------------- CKA

def _hsic_u_statistic(k: np.ndarray, l: np.ndarray) -> float:
    """Song et al. (2012), Theorem 2: HSIC₁ as the U-statistic over all ordered 4-tuples of distinct samples,
    h = 1/24 Σ over the tuple's permutations (t, u, v, w) of k_tu l_tu + k_tu l_vw - 2 k_tu l_tv. An independent
    definition of the estimator (no closed form, brute force)."""
    n = k.shape[0]
    total, count = 0.0, 0
    for quad in itertools.permutations(range(n), 4):
        h = 0.0
        for t, u, v, w in itertools.permutations(quad):
            h += k[t, u] * l[t, u] + k[t, u] * l[v, w] - 2 * k[t, u] * l[t, v]
        total += h / 24
        count += 1
    return total / count


def test_hsic_matches_the_u_statistic_definition():
    x, y = _features(7, 5, seed=1), _features(7, 3, seed=2)
    k, l = (x @ x.T).numpy(), (y @ y.T).numpy()
    expected = _hsic_u_statistic(k, l)
    got = float(hsic_unbiased(gram_matrices([x]), gram_matrices([y]))[0, 0])
    assert got == pytest.approx(expected, rel=1e-9)


def test_cka_of_a_representation_with_itself_is_one():
    x = _features()
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)
    assert linear_cka(x, x, batch_size=16) == pytest.approx(1.0, abs=1e-12)


def test_cka_is_invariant_to_orthogonal_transforms_and_isotropic_scaling():
    x, y = _features(seed=0), _features(d=30, seed=1)
    y = y + 0.5 * x[:, :30]  # related, so the value is far from 0 and 1
    q, _ = torch.linalg.qr(torch.randn(40, 40, generator=torch.Generator().manual_seed(3), dtype=torch.float64))
    base = linear_cka(x, y, batch_size=16)
    assert 0.2 < base < 0.95
    assert linear_cka(x @ q, y, batch_size=16) == pytest.approx(base, abs=1e-10)
    assert linear_cka(7.5 * x, 0.01 * y, batch_size=16) == pytest.approx(base, abs=1e-10)
    # not invariant to an anisotropic scaling: the test can tell
    assert abs(linear_cka(x * torch.linspace(0.1, 3, 40, dtype=torch.float64), y, batch_size=16) - base) > 1e-3


def test_unbiased_cka_of_independent_features_is_near_zero():
    x, y = _features(n=512, d=64, seed=4), _features(n=512, d=64, seed=5)
    unbiased = linear_cka(x, y, batch_size=128)
    assert abs(unbiased) < 0.02
    # the biased estimator (centred Gram matrices) is far from 0 here: what the unbiased one corrects
    h = torch.eye(128, dtype=torch.float64) - 1 / 128
    k, l = h @ x[:128] @ x[:128].T @ h, h @ y[:128] @ y[:128].T @ h
    biased = float((k * l).sum() / torch.sqrt((k * k).sum() * (l * l).sum()))
    assert biased > 0.2


def test_minibatch_cka_sums_hsic_over_batches_before_normalising():
    x, y = _features(32, 6, seed=6), _features(32, 4, seed=7)
    acc = MinibatchCKA()
    for s in (0, 16):
        acc.update(gram_matrices([x[s:s + 16], y[s:s + 16]]), gram_matrices([y[s:s + 16]]))
    h = [hsic_unbiased(gram_matrices([a[s:s + 16]]), gram_matrices([b[s:s + 16]]))[0, 0]
         for a, b in ((x, y), (x, x), (y, y)) for s in (0, 16)]
    expected = (h[0] + h[1]) / math.sqrt((h[2] + h[3]) * (h[4] + h[5]))
    matrix = acc.matrix()
    assert matrix.shape == (2, 1)
    assert float(matrix[0, 0]) == pytest.approx(float(expected), rel=1e-12)
    assert float(matrix[1, 0]) == pytest.approx(1.0, abs=1e-12)


def test_cka_needs_four_samples_per_batch():
    with pytest.raises(ValueError, match='at least 4 samples'):
        hsic_unbiased(gram_matrices([_features(3, 2)]), gram_matrices([_features(3, 2)]))


# ---------------------------------------------------------------------------------------------- attention

def test_patch_distances_of_a_grid():
    d = patch_distances((2, 3), patch_size=16)
    assert d.shape == (6, 6)
    assert float(d[0, 5]) == pytest.approx(16 * math.sqrt(1 + 4))  # (0, 0) to (1, 2)
    assert float(d[1, 4]) == pytest.approx(16.0)  # (0, 1) to (1, 1)


def test_attention_distance_of_identity_and_uniform_maps():
    grid = (2, 2)
    dist = patch_distances(grid)
    identity = torch.eye(4).expand(1, 3, 4, 4)
    assert torch.equal(attention_distance(identity, dist), torch.zeros(1, 3, 4, dtype=torch.float64))
    uniform = torch.full((1, 3, 4, 4), 0.25)
    # from any patch of a 2x2 grid: itself 0, two neighbours 1, the opposite corner sqrt(2) -> (2 + sqrt 2) / 4
    expected = (0 + 1 + 1 + math.sqrt(2)) / 4
    assert torch.allclose(attention_distance(uniform, dist), torch.full((1, 3, 4), expected, dtype=torch.float64))
    # 3x3 grid, uniform: the mean over all 81 ordered pairs, counted by offset (dy, dx) by hand:
    # 9 at 0; 24 at 1 (12 horizontal + 12 vertical); 16 at sqrt 2; 12 at 2; 16 at sqrt 5 (2 x 8); 4 at sqrt 8
    mean_3x3 = (24 * 1 + 16 * math.sqrt(2) + 12 * 2 + 16 * math.sqrt(5) + 4 * math.sqrt(8)) / 81
    stats = AttentionStats()
    stats.update(1, torch.full((2, 1, 9, 9), 1 / 9), patch_distances((3, 3), patch_size=8))
    assert stats.result()['distance'][0][0] == pytest.approx(8 * mean_3x3, rel=1e-6)  # float32 maps


def test_attention_entropy_of_uniform_and_one_hot_maps():
    l = 49
    uniform = torch.full((2, 4, l, l), 1 / l)
    assert torch.allclose(attention_entropy(uniform), torch.full((2, 4, l), math.log(l), dtype=torch.float64))
    one_hot = torch.eye(l).expand(2, 4, l, l)
    assert torch.equal(attention_entropy(one_hot), torch.zeros(2, 4, l, dtype=torch.float64))


def test_patch_attention_leaves_out_the_prefix_tokens_and_renormalises():
    # logits with a class token that takes most of the attention: the patch-only softmax ignores it
    logits = torch.zeros(1, 2, 5, 5)
    logits[..., 0] = 10.0
    probs = patch_attention(logits, num_prefix_tokens=1)
    assert probs.shape == (1, 2, 4, 4)
    assert torch.allclose(probs, torch.full((1, 2, 4, 4), 0.25))
    with pytest.raises(ValueError, match=r'\(B, heads, N, N\)'):
        patch_attention(torch.zeros(2, 5, 5), 1)


# ------------------------------------------------------------------------------------------------ Fourier

def test_fourier_constant_map_has_no_high_frequencies():
    maps = torch.full((2, 3, 8, 8), 2.5)
    rel = relative_log_amplitude(maps)
    assert rel[0] == 0
    # DC = 2.5 * 64, every other amplitude 0 -> log(EPS) - log(160 + EPS)
    assert float(rel[-1]) == pytest.approx(math.log(EPS) - math.log(2.5 * 64 + EPS), abs=1e-6)
    assert float(rel[-1]) < -15


def test_fourier_checkerboard_is_all_highest_frequency():
    i, j = torch.meshgrid(torch.arange(8), torch.arange(8), indexing='ij')
    board = ((-1.0) ** (i + j)).expand(2, 3, 8, 8)
    rel = relative_log_amplitude(board)
    assert float(rel[-1]) == pytest.approx(math.log(64 + EPS) - math.log(EPS), abs=1e-6)
    assert float(rel[-1]) > 15
    # a + b * checkerboard: the amplitudes at 0 and π are a·HW and b·HW, so Δ = log(b / a) (up to EPS)
    mixed = 3.0 + 0.75 * board
    assert float(relative_log_amplitude(mixed)[-1]) == pytest.approx(math.log(0.75 / 3.0), abs=1e-6)


def test_fourier_frequencies_and_averaging():
    assert diagonal_frequencies(8) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert diagonal_frequencies(7)[-1] == pytest.approx(6 / 7)
    # the log amplitude is averaged over images and channels (Park & Kim), not the amplitude
    a, b = torch.full((1, 1, 4, 4), 1.0), torch.full((1, 1, 4, 4), 100.0)
    both = log_amplitude_diagonal(torch.cat([a, b]))
    assert float(both[0]) == pytest.approx((math.log(16 + EPS) + math.log(1600 + EPS)) / 2, rel=1e-9)
    stats = FourierStats()
    stats.update(0, a)
    stats.update(0, b)
    assert stats.result()['relative_log_amplitude'][0][0] == 0
    assert stats.result()['exact_pi'] is True
    with pytest.raises(ValueError, match='square'):
        log_amplitude_diagonal(torch.zeros(1, 1, 4, 6))
