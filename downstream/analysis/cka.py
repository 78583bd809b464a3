"""Linear CKA between layer representations with the unbiased minibatch estimator (Nguyen, Raghu & Kornblith,
2021, Eq. 3), as MAE-lite §4 (Fig. 1) computes it.

Each representation is a batch of n samples, flattened to (n, features) (tokens x channels of one layer). Its
linear Gram matrix K = X Xᵀ enters the unbiased HSIC estimator (Song et al., 2012) with its diagonal zeroed::

    HSIC₁(K, L) = 1 / (n (n - 3)) · [ tr(K L) + 1ᵀK1 · 1ᵀL1 / ((n - 1)(n - 2)) - 2 / (n - 2) · 1ᵀK L1 ]

and minibatch CKA sums it over batches before normalising::

    CKA(X, Y) = Σ_b HSIC₁(K_b, L_b) / sqrt(Σ_b HSIC₁(K_b, K_b) · Σ_b HSIC₁(L_b, L_b))

CKA is 1 for a representation against itself and is invariant to orthogonal transforms and isotropic scaling of
either side; being unbiased, it is ~0 (it may be slightly negative) for independent representations, where the
biased estimator is not.
"""
from typing import Sequence

import torch

MIN_BATCH = 4  # the estimator divides by n - 3


def gram_matrices(reps: Sequence[torch.Tensor]) -> torch.Tensor:
    """Linear Gram matrices with zeroed diagonals, (L, n, n) in float64, of L representations (n, ...) each."""
    grams = []
    for rep in reps:
        x = rep.reshape(rep.shape[0], -1).double()
        k = x @ x.T
        k.fill_diagonal_(0.0)
        grams.append(k)
    return torch.stack(grams)


def hsic_unbiased(ks: torch.Tensor, ls: torch.Tensor) -> torch.Tensor:
    """HSIC₁ of every pair: ``ks`` (A, n, n) and ``ls`` (B, n, n), zero-diagonal Gram matrices → (A, B)."""
    n = ks.shape[-1]
    if n < MIN_BATCH:
        raise ValueError(f'the unbiased HSIC estimator needs at least {MIN_BATCH} samples per batch, got {n}')
    if ls.shape[-1] != n:
        raise ValueError(f'Gram matrices of different batch sizes: {n} vs {ls.shape[-1]} (the same images must '
                         'go through both models)')
    trace = torch.einsum('anm,bnm->ab', ks, ls)  # tr(K L) of symmetric K, L
    k_sum, l_sum = ks.sum(dim=(1, 2)), ls.sum(dim=(1, 2))
    k_rows, l_rows = ks.sum(dim=2), ls.sum(dim=2)  # K1, L1
    middle = torch.outer(k_sum, l_sum) / ((n - 1) * (n - 2))
    last = 2.0 / (n - 2) * (k_rows @ l_rows.T)  # 1ᵀK L1 = (K1)·(L1)
    return (trace + middle - last) / (n * (n - 3))


def hsic_self(ks: torch.Tensor) -> torch.Tensor:
    """HSIC₁(K, K) of each of ``ks`` (A, n, n) → (A,)."""
    n = ks.shape[-1]
    k_sum, k_rows = ks.sum(dim=(1, 2)), ks.sum(dim=2)
    return ((ks * ks).sum(dim=(1, 2)) + k_sum ** 2 / ((n - 1) * (n - 2))
            - 2.0 / (n - 2) * (k_rows * k_rows).sum(dim=1)) / (n * (n - 3))


class MinibatchCKA:
    """Accumulates the layer-by-layer CKA matrix of two models (or of one model with itself) over batches.

    ``update(grams_a, grams_b)`` takes each model's (layers, n, n) zero-diagonal Gram matrices of the same batch
    (:func:`gram_matrices`); ``matrix()`` is the (layers_a, layers_b) CKA.
    """

    def __init__(self):
        self.cross = None
        self.self_a = None
        self.self_b = None
        self.batches = 0

    def update(self, grams_a: torch.Tensor, grams_b: torch.Tensor) -> None:
        cross, self_a, self_b = hsic_unbiased(grams_a, grams_b), hsic_self(grams_a), hsic_self(grams_b)
        if self.cross is None:
            self.cross, self.self_a, self.self_b = cross, self_a, self_b
        else:
            self.cross, self.self_a, self.self_b = self.cross + cross, self.self_a + self_a, self.self_b + self_b
        self.batches += 1

    def matrix(self) -> torch.Tensor:
        if not self.batches:
            raise ValueError(f'no batch of at least {MIN_BATCH} images was seen: CKA is undefined')
        denom = torch.sqrt(torch.outer(self.self_a, self.self_b).clamp_min(0))
        return self.cross / denom.clamp_min(torch.finfo(denom.dtype).tiny)


def linear_cka(x: torch.Tensor, y: torch.Tensor, batch_size: int = 0) -> float:
    """Minibatch linear CKA of two representations (n, ...) of the same n samples; ``batch_size`` 0: one batch."""
    n = x.shape[0]
    size = batch_size or n
    acc = MinibatchCKA()
    for start in range(0, n - MIN_BATCH + 1, size):
        acc.update(gram_matrices([x[start:start + size]]), gram_matrices([y[start:start + size]]))
    return float(acc.matrix()[0, 0])
