"""A toy backbone family added the way docs/extending-backbone.md says, without editing any file of the suite: its
model (meeting the family contract, backbones/contract.py), its dense backbone, its record and its variants, all
registered when this module is imported (in a config, ``custom_imports = dict(imports=['toy_family'])``; on the
command line, ``--cfg-options custom_imports.imports=[toy_family]``). tests/test_extending_backbone.py swaps
``toypool_tiny_patch8_64`` into every task's demo config and reads its records; a family without a class token or
attention, it has none of the capabilities MAE and MoCo-v3 need (the guide's own family, trained end to end, has).

The model is a PoolFormer-style token mixer (Yu et al., CVPR 2022, without its stages): the patches mixed by a
3x3 average pool over the grid, channels by an MLP; no attention, no position embedding, any grid.
"""
import torch
from mmengine.model import BaseModule
from torch import nn

from backbones.dense import DenseBackboneMixin
from backbones.family import Family, register_family
from backbones.layers import Mlp, PatchEmbed, drop_path_rates, make_drop_path, residual
from backbones.vit import ViTFamilyMixin
from vitbench.registry import MODELS


class PoolBlock(nn.Module):
    """x + pool(norm(x)) - norm(x) over the patch grid, then x + MLP(norm(x)); blocks take ``grid`` as the suite's."""

    def __init__(self, dim: int, mlp_ratio: float, drop_path: float):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))
        self.drop_path = make_drop_path(drop_path)

    def forward(self, x: torch.Tensor, grid) -> torch.Tensor:
        B, N, C = x.shape
        y = self.norm1(x).transpose(1, 2).reshape(B, C, *grid)
        x = residual(x, (self.pool(y) - y).flatten(2).transpose(1, 2), None, self.drop_path)
        return residual(x, self.mlp(self.norm2(x)), None, self.drop_path)


class ToyPoolNet(ViTFamilyMixin, BaseModule):
    """Patch embedding, ``depth`` pooling blocks, final norm, average pooling ('avg'; '' for none), linear
    classifier."""
    # the family contract (backbones/contract.py), stated by the class
    num_prefix_tokens = 0              # no class token: the walk's tokens are the patches
    block_attention = False            # pooling, no attention maps (forward_attention refuses)
    supports_keep = False              # the pool mixes neighbours on the full grid: no subset of the patches (no MAE)
    embedding_params = ()              # no position embedding, no class token
    layer0_names = ('patch_embed',)    # layer 0 of layer-wise decay
    checkpoint_optional = ('norm.', 'head.')   # keys this model may lack (a dense backbone has no head)
    checkpoint_may_miss = ('head.',)           # keys a checkpoint may lack

    def __init__(self, img_size=64, patch_size=8, in_chans: int = 3, num_classes: int = 1000,
                 global_pool: str = 'avg', embed_dim: int = 32, depth: int = 6, mlp_ratio: float = 2.,
                 final_norm: bool = True, drop_rate: float = 0., drop_path_rate: float = 0.,
                 drop_path_uniform: bool = False, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        self._set_dims(num_classes, global_pool, embed_dim, depth)
        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        dpr = drop_path_rates(drop_path_rate, depth, drop_path_uniform)
        self.blocks = nn.ModuleList([PoolBlock(embed_dim, mlp_ratio, dpr[i]) for i in range(depth)])
        self._build_head(nn.LayerNorm(embed_dim) if final_norm else nn.Identity(), drop_rate)
        self._init_weights()

    def _trunk_input(self, x: torch.Tensor, keep=None):
        """The blocks' input and the patch grid (backbones/block_walk.py); ``keep`` is refused by the walk."""
        return self.patch_embed(x)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised patch tokens (B, N, C): the last hidden state of the suite's block walk."""
        return self.norm(self.last_hidden(x).tokens)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        x = self.head_drop(x.mean(dim=1) if self.global_pool == 'avg' else x)
        return x if pre_logits else self.head(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_head(self.forward_features(x))


@MODELS.register_module(name='ToyPoolNet')
class ToyPoolNetBackbone(DenseBackboneMixin, ToyPoolNet):
    """The dense ToyPoolNet (mmseg / mmdet): the maps of its ``out_indices`` blocks."""
    family, default_depth = 'toypool', 6
    dense_overrides = {}


register_family(
    Family(name='toypool', title='ToyPoolNet', model_class=ToyPoolNet, dense_type='ToyPoolNet'),
    variants={'toypool_tiny_patch8_64': dict(paper='vitbench toy family (tests/toy_fixtures/toy_family.py)',
                                             kwargs=dict(img_size=64, patch_size=8, embed_dim=32, depth=6))})
