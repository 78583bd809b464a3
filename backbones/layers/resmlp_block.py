"""ResMLP's layer (Touvron et al., "ResMLP: Feedforward networks for image classification with data-efficient
training"; thesis §4.2, Eqs. 4.1-4.3): the Affine pre-normalisation, a cross-patch linear sublayer and a
cross-channel MLP, each residual with LayerScale.

Key names follow timm's ``ResBlock`` (``norm1``, ``linear_tokens``, ``mlp_channels``, ``norm2``) with
LayerScale modules (``ls1.gamma`` for timm's bare ``ls1``); ``backbones.checkpoint`` maps timm's and the
official ``resmlp_models.py`` names (``attn``, ``mlp``, ``gamma_1``).
"""
import torch
from torch import nn

from .blocks import make_drop_path, residual
from .mlp import LayerScale, Mlp


class Affine(nn.Module):
    """Aff(x) = alpha * x + beta per channel (last dim), Eq. 4.1: a normalisation without statistics.

    Initialised as the identity (alpha = 1, beta = 0), as the thesis does for pre-normalisation.
    """

    def __init__(self, dim: int):
        super().__init__()
        self.alpha = nn.Parameter(torch.ones(dim))
        self.beta = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(self.beta, self.alpha, x)


class ResMLPBlock(nn.Module):
    """Z = X + LS(A · Aff(X)) over the patches (Eq. 4.2), then Y = Z + LS(MLP(Aff(Z))) over the channels
    (Eq. 4.3). ``A`` (``linear_tokens``) is an N x N matrix: the block works on exactly ``num_patches`` tokens.
    """

    def __init__(self, dim: int, num_patches: int, mlp_ratio: float = 4., init_values: float = 1e-4,
                 drop: float = 0., drop_path: float = 0., act_layer=nn.GELU):
        super().__init__()
        self.norm1 = Affine(dim)
        self.linear_tokens = nn.Linear(num_patches, num_patches)
        self.ls1 = LayerScale(dim, init_values)
        self.drop_path1 = make_drop_path(drop_path)
        self.norm2 = Affine(dim)
        self.mlp_channels = Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer, drop=drop)
        self.ls2 = LayerScale(dim, init_values)
        self.drop_path2 = make_drop_path(drop_path)

    def mix_tokens(self, x: torch.Tensor) -> torch.Tensor:
        """A · x + b for every channel of (B, N, C) tokens, as one batched product on the tokens as they lie
        (the official transpose -> Linear -> transpose copies the activations twice, forward and backward)."""
        A = self.linear_tokens
        return torch.baddbmm(A.bias.view(1, -1, 1), A.weight.expand(x.shape[0], -1, -1), x)

    def forward(self, x: torch.Tensor, grid=None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``grid`` is accepted (and unused) like the transformer blocks'."""
        x = residual(x, self.mix_tokens(self.norm1(x)), self.ls1, self.drop_path1)
        return residual(x, self.mlp_channels(self.norm2(x)), self.ls2, self.drop_path2)
