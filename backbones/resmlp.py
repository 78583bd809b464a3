"""ResMLP (Touvron et al., "ResMLP: Feedforward networks for image classification with data-efficient
training"; thesis ch. 4): patches projected linearly, a stack of residual layers that mix the patches with one
linear layer and the channels with an MLP (Affine pre-normalisation, LayerScale), average pooling, linear
classifier. No attention, no position embedding, no class token, no batch statistics.
"""
import torch
from mmengine.model import BaseModule
from torch import nn

from .checkpoint.formats import RESMLP_OFFICIAL, RESMLP_TIMM
from .family import Family, register_family
from .layers import Affine, PatchEmbed, ResMLPBlock, drop_path_rates
from .vit import ViTFamilyMixin


class ResMLP(ViTFamilyMixin, BaseModule):
    """ResMLP with the official ``resmlp_models.py`` architecture (timm's ``resmlp_*`` are the same network).

    Args:
        img_size: the input size. The cross-patch layers are (H/p * W/p) square matrices: the model takes
            exactly this size (the dense backbone pads smaller inputs, see ``backbones.dense``).
        global_pool: 'avg' (mean of the patch tokens, the paper's) or '' (no pooling).
        init_values: LayerScale init (official: 0.1 at depth 12, 1e-5 at 24, 1e-6 at 36 and for B24).
        drop_path_uniform: the official code uses the same stochastic-depth rate in every block.
        final_norm: the final Affine before pooling (dense backbones may leave it out).
    """
    checkpoint_optional = ('norm.', 'head.')
    checkpoint_may_miss = ('head.',)
    embedding_params = ()
    layer0_names = ('patch_embed',)
    num_prefix_tokens = 0

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, num_classes: int = 1000,
                 global_pool: str = 'avg', embed_dim: int = 384, depth: int = 12, mlp_ratio: float = 4.,
                 init_values: float = 1e-4, final_norm: bool = True, drop_rate: float = 0.,
                 proj_drop_rate: float = 0., drop_path_rate: float = 0., drop_path_uniform: bool = True,
                 init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        if global_pool not in ('avg', ''):
            raise ValueError(f"ResMLP pools by averaging: global_pool must be 'avg' or '', got {global_pool!r}")
        self._set_dims(num_classes, global_pool, embed_dim, depth)

        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        dpr = drop_path_rates(drop_path_rate, depth, drop_path_uniform)
        self.blocks = nn.ModuleList([
            ResMLPBlock(embed_dim, self.patch_embed.num_patches, mlp_ratio=mlp_ratio, init_values=init_values,
                        drop=proj_drop_rate, drop_path=dpr[i])
            for i in range(depth)])
        self._build_head(Affine(embed_dim) if final_norm else nn.Identity(), drop_rate)
        self._init_weights()

    def _trunk_input(self, x: torch.Tensor, keep=None):
        x, grid = self.patch_embed(x)
        if grid != self.grid_size:
            H, W = self.patch_embed.img_size
            raise ValueError(f'ResMLP mixes a fixed {self.grid_size[0]}x{self.grid_size[1]} grid of patches (its '
                             f'cross-patch layers are square matrices of that size): it takes {H}x{W} inputs, '
                             f'got a {grid[0]}x{grid[1]} grid. Build it with '
                             f'img_size=<the input size>, or resize the images')
        return x, grid

    def forward_attention(self, x, indices=-1, kind='probs'):
        raise NotImplementedError('ResMLP has no attention maps; its cross-patch weights are '
                                  'blocks[i].linear_tokens.weight (N x N)')

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 3, H, W) -> normalised patch tokens (B, N, C)."""
        return self.norm(self.last_hidden(x).tokens)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        if self.global_pool == 'avg':
            x = x.mean(dim=1)
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_head(self.forward_features(x))


# the family's record (backbones/family.py): the cross-patch layers fix the grid to img_size
register_family(Family(name='resmlp', title='ResMLP', model_class=ResMLP, dense_type='ResMLP', fixed_grid=True,
                       checkpoint_formats=(RESMLP_TIMM, RESMLP_OFFICIAL)))
