"""Fourier analysis of feature maps (Park & Kim, 2022, "How do vision transformers work?"), MAE-lite Fig. 3.

A layer's patch tokens, reshaped to (B, C, H, W) maps, are 2-D Fourier transformed; the log amplitude
log(|F| + eps) is averaged over images and channels and read along the diagonal of the spectrum, from the zero
frequency to the highest one a grid holds (π in both directions, for an even grid). Relative to the zero frequency,
this gives the curve Park & Kim plot; its value at 1.0π, "Δ log amplitude", is the paper's per-layer number:
how much high-frequency signal a layer keeps (more negative: smoother maps).
"""
import math
from typing import List

import torch

EPS = 1e-6  # added to the amplitude before the log (Park & Kim's constant): a zero amplitude gives log(1e-6)


def token_maps(tokens: torch.Tensor, grid) -> torch.Tensor:
    """(B, H·W, C) patch tokens in row-major order → (B, C, H, W) maps."""
    b, n, c = tokens.shape
    h, w = grid
    if n != h * w:
        raise ValueError(f'{n} tokens do not fill a {h}x{w} grid')
    return tokens.transpose(1, 2).reshape(b, c, h, w)


def diagonal_frequencies(size: int) -> List[float]:
    """The normalised frequencies (units of π) of the diagonal read by :func:`log_amplitude_diagonal`."""
    return [2.0 * k / size for k in range(size // 2 + 1)]


def log_amplitude_diagonal(maps: torch.Tensor) -> torch.Tensor:
    """(B, C, H, H) maps → (H//2 + 1,) log amplitude at the diagonal frequencies (k, k), k = 0..H//2 (frequency
    2πk/H), averaged over the images and channels."""
    if maps.dim() != 4 or maps.shape[-1] != maps.shape[-2]:
        raise ValueError(f'expected square feature maps (B, C, H, H), got {tuple(maps.shape)}')
    size = maps.shape[-1]
    amplitude = torch.fft.fft2(maps.double()).abs()
    log_amp = torch.log(amplitude + EPS).mean(dim=(0, 1))  # (H, H)
    k = torch.arange(size // 2 + 1)
    return log_amp[k, k]


def relative_log_amplitude(maps: torch.Tensor) -> torch.Tensor:
    """The diagonal log amplitude minus its value at the zero frequency (first entry 0)."""
    curve = log_amplitude_diagonal(maps)
    return curve - curve[0]


class FourierStats:
    """Mean log-amplitude diagonal per layer over batches; ``result()`` gives the relative curves and Δ."""

    def __init__(self):
        self.sums = {}
        self.images = {}
        self.size = None

    def update(self, layer: int, maps: torch.Tensor) -> None:
        curve = log_amplitude_diagonal(maps) * maps.shape[0]
        self.size = maps.shape[-1]
        self.sums[layer] = self.sums.get(layer, 0) + curve
        self.images[layer] = self.images.get(layer, 0) + maps.shape[0]

    def result(self) -> dict:
        layers = sorted(self.images)
        curves = [self.sums[i] / self.images[i] for i in layers]
        relative = [(c - c[0]).tolist() for c in curves]
        freqs = diagonal_frequencies(self.size)
        return dict(frequencies_pi=freqs, relative_log_amplitude=relative,
                    delta_log_amplitude=[r[-1] for r in relative],
                    highest_frequency_pi=freqs[-1], exact_pi=math.isclose(freqs[-1], 1.0))
