"""The classifier of PatchConvNet's one class token per class (thesis §5.2, Table 5.7): token i, pooled by its own
class query, gives the logit of class i alone through its own linear map to one number (the official
``head = ModuleList(Linear(d, 1) for each class)``, held here as one (classes, d) weight and (classes,) bias)."""
import torch
from timm.layers import trunc_normal_
from torch import nn


class PerClassHead(nn.Module):
    """(B, k, d) class tokens -> (B, k) logits: ``logit_i = <weight_i, token_i> + bias_i``."""

    def __init__(self, embed_dim: int, num_classes: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(num_classes, embed_dim))
        self.bias = nn.Parameter(torch.zeros(num_classes))
        trunc_normal_(self.weight, std=.02)  # the DeiT / CaiT rule for every linear layer

    @property
    def out_features(self) -> int:
        return self.weight.shape[0]

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.shape[-2:] != self.weight.shape:
            raise ValueError(f'PerClassHead: expected (B, {self.weight.shape[0]}, {self.weight.shape[1]}) class '
                             f'tokens, got {tuple(tokens.shape)}')
        return (tokens * self.weight).sum(-1) + self.bias
