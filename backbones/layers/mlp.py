"""Transformer feed-forward network and LayerScale (on tokens, and on (B, C, H, W) maps)."""
import torch
from torch import nn


class Mlp(nn.Module):
    """Linear -> GELU -> Linear (keys ``fc1``, ``fc2`` as in timm and the official DeiT/CaiT/MAE code)."""

    def __init__(self, dim: int, hidden_dim: int, act_layer=nn.GELU, drop: float = 0.):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden_dim)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.fc2 = nn.Linear(hidden_dim, dim)
        self.drop2 = nn.Dropout(drop)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop2(self.fc2(self.drop1(self.act(self.fc1(x)))))


class LayerScale(nn.Module):
    """Per-channel learnable scaling of a residual branch, initialised to a small ``init_values``."""

    def __init__(self, dim: int, init_values: float = 1e-4):
        super().__init__()
        self.init_values = init_values
        self.gamma = nn.Parameter(torch.full((dim,), float(init_values)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma


class LayerScale2d(LayerScale):
    """LayerScale of (B, C, H, W) maps: the same ``gamma`` per channel (key ``gamma``), along dim 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma.view(-1, 1, 1)
