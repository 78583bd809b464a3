"""The k branches of a parallel ViT layer run as ONE wider operation (Touvron et al., 2022, §3.2 and Table 4).

Every branch reads the same input x, and its pre-norm is a LayerNorm: the normalisation (mean, variance) is
shared and only the affine (w_i, b_i) differs. A branch's first linear layer therefore folds into the
normalised input x̂ = (x - mean) / std:

    W_i (w_i ⊙ x̂ + b_i) + c_i = (W_i diag(w_i)) x̂ + (W_i b_i + c_i)

so the k branches' first layers stack into one (k·out, C) matrix applied to x̂ once. The branches' outputs are
summed after their LayerScale γ_i, so their last layers stack side by side into one (C, k·in) matrix:

    Σ_i γ_i ⊙ (V_i h_i + d_i) = [diag(γ_1) V_1 | ... | diag(γ_k) V_k] [h_1; ...; h_k] + Σ_i γ_i ⊙ d_i

Attention: one qkv product of 3·k·C outputs, the k·heads heads of all branches in ONE attention call, one
output projection of k·C inputs. MLP: one fc1 of k·hidden outputs, one activation, one fc2 of k·hidden inputs.
The parameters stay those of the branches (state dicts and official checkpoints load unchanged); the stacked
matrices are built from them at forward time (differentiable, so training works too), and cached while the
parameters do not change and no gradient is asked for (inference).
"""
from typing import List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F
from torch import nn

from .attention import Attention, sdpa


# CPU inference runs the fused block on chunks of about this many tokens: the k-wide intermediates of a whole
# batch (qkv of 3·k·C, the MLP's k·4·C hidden units) are k times a branch's, past the caches and, above 32 MB,
# past glibc's largest reused heap block, so every call page-faults fresh memory in; per chunk they stay small
# (docs/benchmarks.md, "Parallel ViT": 4-7 % per block on one thread at batch 16)
CPU_CHUNK_TOKENS = 800


def cpu_chunk_images(x: torch.Tensor) -> int:
    """Images per chunk for a fused block's input (B, N, C) on CPU without gradients; 0: run it whole (a GPU, a
    training step, or a batch no larger than one chunk)."""
    if x.device.type != 'cpu' or (torch.is_grad_enabled() and x.requires_grad) or x.dim() != 3:
        return 0
    step = max(1, CPU_CHUNK_TOKENS // x.shape[1])
    return step if x.shape[0] > step else 0


def _affine(norm: nn.LayerNorm, dim: int, like: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    w = norm.weight if norm.weight is not None else like.new_ones(dim)
    b = norm.bias if norm.bias is not None else like.new_zeros(dim)
    return w, b


def stack_input_layers(norms: Sequence[nn.LayerNorm], layers: Sequence[nn.Linear], groups: int = 1):
    """(weight (k·out, C), bias (k·out,)) of the k maps x̂ -> layer_i(norm_i(x)) stacked along the outputs.

    ``groups=g`` cuts each layer's outputs into g groups and stacks group by group: (g, k, out / g). For the
    qkv projections (g = 3) the stacked output is then (q of all branches, k of all branches, v of all
    branches), whose q, k and v are views with the branches' heads side by side, as one attention layer of
    k·heads heads would lay them out (no copy before the attention call).
    """
    weights, biases = [], []
    for norm, layer in zip(norms, layers):
        w, b = _affine(norm, layer.in_features, layer.weight)
        weights.append(layer.weight * w)  # W_i diag(w_i): scales the columns
        bias = layer.weight @ b
        biases.append(bias if layer.bias is None else bias + layer.bias)
    C = weights[0].shape[1]
    weight = torch.stack([w.view(groups, -1, C) for w in weights], 1).reshape(-1, C)
    bias = torch.stack([b.view(groups, -1) for b in biases], 1).reshape(-1)
    return weight, bias


def stack_output_layers(layers: Sequence[nn.Linear], scales: Sequence[Optional[nn.Module]]):
    """(weight (C, k·in), bias (C,)) of Σ_i ls_i(layer_i(h_i)) over the concatenated inputs [h_1; ...; h_k]."""
    weights, bias = [], 0
    for layer, ls in zip(layers, scales):
        gamma = ls.gamma if ls is not None else None
        weights.append(layer.weight if gamma is None else layer.weight * gamma[:, None])
        if layer.bias is not None:
            bias = bias + (layer.bias if gamma is None else layer.bias * gamma)
    weight = torch.cat(weights, 1)
    return weight, (bias if torch.is_tensor(bias) else None)


def shared_norm_eps(norms: Sequence[nn.Module], dim: int) -> Optional[float]:
    """The common eps when every norm is a LayerNorm over the last ``dim`` channels with the same eps, else None
    (the branches then cannot share their normalisation: the block runs them one after the other)."""
    if not all(type(n) is nn.LayerNorm and tuple(n.normalized_shape) == (dim,) for n in norms):
        return None
    eps = {n.eps for n in norms}
    return eps.pop() if len(eps) == 1 else None


class FusedWeights:
    """The stacked matrices of one parallel block, rebuilt when a parameter changes (its storage or version)
    or when gradients are wanted (then they are built in the autograd graph at every call).

    Under autocast they are cached in its dtype: autocast would otherwise cast every fp32 weight to bf16 again at
    every call, once per chunk of images on CPU (B18x2 at batch 8 in bf16: 0.96 of the sequential form with the
    casts, docs/benchmarks.md); the sequential form's modules pay that cast once per call, as any module does."""

    def __init__(self):
        self._key, self._value = None, None

    def get(self, params: List[torch.Tensor], build):
        if torch.is_grad_enabled() and any(p.requires_grad for p in params):
            self._key = self._value = None  # never hold a graph between steps
            return build()
        device = params[0].device.type  # autocast has no state for some types (meta: shapes only)
        cast = torch.get_autocast_dtype(device) if torch.amp.is_autocast_available(device) and \
            torch.is_autocast_enabled(device) else None
        key = (tuple((p.data_ptr(), p._version, p.dtype, p.device) for p in params), cast)
        if key != self._key:
            with torch.no_grad():
                value = build()
                self._value = value if cast is None else tuple(
                    t if t is None or not t.is_floating_point() else t.to(cast) for t in value)
            self._key = key
        return self._value


def can_fuse_attention(attns) -> bool:
    """Plain global self-attention (no relative positions) in every branch: what the stacked form computes."""
    return all(type(a) is Attention and not a.use_rel_pos for a in attns)


def fused_attention(x: torch.Tensor, eps: float, qkv_weight, qkv_bias, proj_weight, proj_bias, num_branches: int,
                    num_heads: int, num_queries: Optional[int] = None) -> torch.Tensor:
    """Σ_i ls_i(attn_i(norm_i(x))) of the k branches in one qkv product, one attention call over k·heads heads
    and one output projection; ``num_queries`` keeps the first n tokens as queries (output (B, n, C))."""
    B, N, C = x.shape
    head_dim = C // num_heads
    qkv = F.linear(F.layer_norm(x, (C,), eps=eps), qkv_weight, qkv_bias)
    # stacked as (3, branches, heads, head_dim) (stack_input_layers groups=3): Attention.split_heads' layout
    # for branches x heads heads
    q, k, v = (t.transpose(1, 2) for t in qkv.view(B, N, 3, num_branches * num_heads, head_dim).unbind(2))
    if num_queries is not None:
        q = q[:, :, :num_queries]
    out = sdpa(q, k, v)  # (B, k·heads, n, head_dim): branch i's heads are [i·heads, (i+1)·heads)
    out = out.transpose(1, 2).reshape(B, out.shape[2], num_branches * C)
    return F.linear(out, proj_weight, proj_bias)


def fused_mlp(x: torch.Tensor, eps: float, fc1_weight, fc1_bias, fc2_weight, fc2_bias, act: nn.Module):
    """Σ_i ls_i(mlp_i(norm_i(x))) of the k branches as one fc1 of k·hidden outputs and one fc2 of k·hidden
    inputs (the activation is elementwise, so one call covers all branches)."""
    C = x.shape[-1]
    return F.linear(act(F.linear(F.layer_norm(x, (C,), eps=eps), fc1_weight, fc1_bias)), fc2_weight, fc2_bias)
