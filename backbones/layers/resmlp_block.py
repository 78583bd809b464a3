"""ResMLP's layer (Touvron et al., "ResMLP: Feedforward networks for image classification with data-efficient
training"; thesis §4.2, Eqs. 4.1-4.3): the Affine pre-normalisation, a cross-patch linear sublayer and a
cross-channel MLP, each residual with LayerScale.

Key names follow timm's ``ResBlock`` (``norm1``, ``linear_tokens``, ``mlp_channels``, ``norm2``) with
LayerScale modules (``ls1.gamma`` for timm's bare ``ls1``); ``backbones.checkpoint`` maps timm's and the
official ``resmlp_models.py`` names (``attn``, ``mlp``, ``gamma_1``).

The thesis' ablations (Table 4.3) are options of the block: ``norm`` (the pre-normalisation: Affine, LayerNorm
or BatchNorm) and ``cross_patch`` (the patch-communication sublayer: the linear layer, an MLP over the patches,
none, or a 3x3 convolution: full, depth-wise or depth-separable). Their parameter counts match the table's
(tests/test_resmlp_ablations.py).
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


class TokenBatchNorm(nn.BatchNorm1d):
    """BatchNorm over the channels of (B, N, C) tokens (statistics over batch and patches)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.flatten(0, 1)).view_as(x)


RESMLP_NORMS = {'affine': Affine, 'ln': lambda dim: nn.LayerNorm(dim, eps=1e-6), 'bn': TokenBatchNorm}
CROSS_PATCH = ('linear', 'mlp', 'none', 'conv3x3', 'dwconv3x3', 'dsconv3x3')


def resmlp_norm(norm: str, dim: int) -> nn.Module:
    if norm not in RESMLP_NORMS:
        raise ValueError(f'ResMLP norm must be one of {sorted(RESMLP_NORMS)}, got {norm!r}')
    return RESMLP_NORMS[norm](dim)


class ConvTokens(nn.Module):
    """A 3x3 convolution on the patch grid of (B, N, C) tokens (Table 4.3's "conv 3x3" rows): ``kind`` 'conv3x3'
    (full), 'dwconv3x3' (depth-wise) or 'dsconv3x3' (depth-wise then point-wise, depth-separable)."""

    def __init__(self, dim: int, kind: str):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1, groups=1 if kind == 'conv3x3' else dim)
        self.pointwise = nn.Conv2d(dim, dim, 1) if kind == 'dsconv3x3' else nn.Identity()

    def forward(self, x: torch.Tensor, grid) -> torch.Tensor:
        B, N, C = x.shape
        y = x.transpose(1, 2).reshape(B, C, *grid)
        return self.pointwise(self.conv(y)).flatten(2).transpose(1, 2)


class ResMLPBlock(nn.Module):
    """Z = X + LS(A · Aff(X)) over the patches (Eq. 4.2), then Y = Z + LS(MLP(Aff(Z))) over the channels
    (Eq. 4.3). ``A`` (``linear_tokens``) is an N x N matrix: the block works on exactly ``num_patches`` tokens.

    Ablations (Table 4.3): ``norm`` 'affine' (the paper's), 'ln' or 'bn'; ``cross_patch`` 'linear' (the paper's),
    'mlp' (``mlp_tokens``: N -> 4N -> N with GELU over the patches), 'none' (no first sublayer), 'conv3x3',
    'dwconv3x3' or 'dsconv3x3' (``conv_tokens``, on the patch grid).
    """

    def __init__(self, dim: int, num_patches: int, mlp_ratio: float = 4., init_values: float = 1e-4,
                 drop: float = 0., drop_path: float = 0., act_layer=nn.GELU, norm: str = 'affine',
                 cross_patch: str = 'linear'):
        super().__init__()
        if cross_patch not in CROSS_PATCH:
            raise ValueError(f'ResMLP cross_patch must be one of {CROSS_PATCH}, got {cross_patch!r}')
        self.cross_patch = cross_patch
        if cross_patch != 'none':
            self.norm1 = resmlp_norm(norm, dim)
            if cross_patch == 'linear':
                self.linear_tokens = nn.Linear(num_patches, num_patches)
            elif cross_patch == 'mlp':
                self.mlp_tokens = Mlp(num_patches, 4 * num_patches, act_layer=act_layer, drop=drop)
            else:
                self.conv_tokens = ConvTokens(dim, cross_patch)
            self.ls1 = LayerScale(dim, init_values)
            self.drop_path1 = make_drop_path(drop_path)
        self.norm2 = resmlp_norm(norm, dim)
        self.mlp_channels = Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer, drop=drop)
        self.ls2 = LayerScale(dim, init_values)
        self.drop_path2 = make_drop_path(drop_path)

    def mix_tokens(self, x: torch.Tensor, grid=None) -> torch.Tensor:
        """A · x + b for every channel of (B, N, C) tokens, as one batched product on the tokens as they lie
        (the official transpose -> Linear -> transpose copies the activations twice, forward and backward);
        the ablations' sublayer otherwise."""
        if self.cross_patch == 'linear':
            A = self.linear_tokens
            return torch.baddbmm(A.bias.view(1, -1, 1), A.weight.expand(x.shape[0], -1, -1), x)
        if self.cross_patch == 'mlp':
            return self.mlp_tokens(x.transpose(1, 2)).transpose(1, 2)
        if grid is None:
            raise ValueError(f'ResMLP cross_patch={self.cross_patch!r} convolves the patch grid: pass grid=(H, W)')
        return self.conv_tokens(x, grid)

    def forward(self, x: torch.Tensor, grid=None) -> torch.Tensor:
        """(B, N, C) -> (B, N, C); ``grid`` (H, W) is needed by the convolutional ablations only."""
        if self.cross_patch != 'none':
            x = residual(x, self.mix_tokens(self.norm1(x), grid), self.ls1, self.drop_path1)
        return residual(x, self.mlp_channels(self.norm2(x)), self.ls2, self.drop_path2)


class ClassMLPBlock(nn.Module):
    """Table 4.3's "Class-MLP" pooling: CaiT's class-attention block with linear layers in place of attention.
    The class token gathers the patches with a learned linear combination of the N + 1 tokens (class token
    first), then an MLP over the channels; both residual with Affine pre-normalisation and LayerScale. The
    patches are not updated."""

    def __init__(self, dim: int, num_patches: int, mlp_ratio: float = 4., init_values: float = 1e-4,
                 norm: str = 'affine', act_layer=nn.GELU):
        super().__init__()
        self.norm1 = resmlp_norm(norm, dim)
        self.gather = nn.Linear(num_patches + 1, 1)
        self.ls1 = LayerScale(dim, init_values)
        self.norm2 = resmlp_norm(norm, dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer)
        self.ls2 = LayerScale(dim, init_values)

    def forward(self, x: torch.Tensor, cls_token: torch.Tensor) -> torch.Tensor:
        """patches (B, N, C), class token (B, 1, C) -> the updated class token (B, 1, C)."""
        u = self.norm1(torch.cat([cls_token, x], dim=1))
        cls_token = cls_token + self.ls1(self.gather(u.transpose(1, 2)).transpose(1, 2))
        return cls_token + self.ls2(self.mlp(self.norm2(cls_token)))
