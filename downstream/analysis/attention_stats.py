"""Attention distance and attention entropy per layer and head: MAE-lite §4, Eqs. (1)-(2) and Fig. 5.

For head h and query token j, with p = the attention probabilities of the patch tokens::

    D_{h,j} = Σ_i p_{h,j,i} · G_{j,i}        (G: Euclidean distance between the two patches' positions)
    E_{h,j} = -Σ_i p_{h,j,i} · log p_{h,j,i}

each averaged over the query tokens and the images. As in the official analysis code, the class (and
distillation) tokens are left out and the softmax is taken over the patch keys only: the map used is
``softmax(logits[..., prefix:, prefix:])``. Distances are in pixels of the model's input (patch units x the patch
size; the official code multiplies by 14 for 16-pixel patches). Entropy is in nats: log(l) for uniform attention
over l patches, 0 for attention on one patch.
"""
from typing import Tuple

import torch


def patch_attention(logits: torch.Tensor, num_prefix_tokens: int) -> torch.Tensor:
    """(B, heads, N, N) attention logits → (B, heads, P, P) probabilities among the P = N - prefix patches."""
    if logits.dim() != 4 or logits.shape[-1] != logits.shape[-2]:
        raise ValueError(f'expected attention logits of shape (B, heads, N, N), got {tuple(logits.shape)}')
    return logits[..., num_prefix_tokens:, num_prefix_tokens:].float().softmax(dim=-1)


def patch_distances(grid: Tuple[int, int], patch_size: float = 1.0) -> torch.Tensor:
    """(P, P) Euclidean distances between the centres of the patches of a row-major (H, W) grid, x patch_size."""
    h, w = grid
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float64), torch.arange(w, dtype=torch.float64),
                            indexing='ij')
    pos = torch.stack([ys.flatten(), xs.flatten()], dim=1)
    return torch.cdist(pos, pos) * patch_size


def attention_distance(probs: torch.Tensor, distances: torch.Tensor) -> torch.Tensor:
    """Eq. (1): (B, heads, P, P) probabilities (rows: queries) and (P, P) distances → (B, heads, P)."""
    if probs.shape[-1] != distances.shape[-1]:
        raise ValueError(f'the attention maps cover {probs.shape[-1]} patches, the grid {distances.shape[-1]}')
    return (probs.double() * distances).sum(dim=-1)


def attention_entropy(probs: torch.Tensor) -> torch.Tensor:
    """Eq. (2): (B, heads, P, P) probabilities → (B, heads, P) entropies in nats (0 · log 0 = 0)."""
    return torch.special.entr(probs.double()).sum(dim=-1)


class AttentionStats:
    """Mean attention distance and entropy per layer and head, accumulated over batches of images."""

    def __init__(self):
        self.distance = {}  # layer -> (heads,) sum over images of the token-mean
        self.entropy = {}
        self.images = {}

    def update(self, layer: int, probs: torch.Tensor, distances: torch.Tensor) -> None:
        d = attention_distance(probs, distances).mean(dim=-1).sum(dim=0)  # (heads,)
        e = attention_entropy(probs).mean(dim=-1).sum(dim=0)
        self.distance[layer] = self.distance.get(layer, 0) + d
        self.entropy[layer] = self.entropy.get(layer, 0) + e
        self.images[layer] = self.images.get(layer, 0) + probs.shape[0]

    def result(self) -> dict:
        """{'distance': [[per head] per layer], 'entropy': [...]} in layer order (block 1 first)."""
        layers = sorted(self.images)
        return dict(distance=[(self.distance[i] / self.images[i]).tolist() for i in layers],
                    entropy=[(self.entropy[i] / self.images[i]).tolist() for i in layers])
