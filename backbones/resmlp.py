"""ResMLP (Touvron et al., "ResMLP: Feedforward networks for image classification with data-efficient
training"; thesis ch. 4): patches projected linearly, a stack of residual layers that mix the patches with one
linear layer and the channels with an MLP (Affine pre-normalisation, LayerScale), average pooling, linear
classifier. No attention, no position embedding, no class token, no batch statistics.

Table 4.3's ablations are keys of the family: ``norm`` ('affine' | 'ln' | 'bn'), ``cross_patch`` ('linear' |
'mlp' | 'none' | 'conv3x3' | 'dwconv3x3' | 'dsconv3x3'), ``global_pool='class_mlp'`` (Class-MLP pooling),
``patch_size`` and ``depth`` (backbones/layers/resmlp_block.py).
"""
import torch
from mmengine.model import BaseModule
from torch import nn

from .checkpoint.formats import RESMLP_OFFICIAL, RESMLP_TIMM
from .family import Family, register_family
from torch.nn.init import trunc_normal_

from .layers import ClassMLPBlock, PatchEmbed, ResMLPBlock, drop_path_rates
from .layers.resmlp_block import resmlp_norm
from .vit import ViTFamilyMixin


class ResMLP(ViTFamilyMixin, BaseModule):
    """ResMLP with the official ``resmlp_models.py`` architecture (timm's ``resmlp_*`` are the same network).

    Args:
        img_size: the input size. The cross-patch layers are (H/p * W/p) square matrices: the model takes
            exactly this size (the dense backbone pads smaller inputs, see ``backbones.dense``).
        global_pool: 'avg' (mean of the patch tokens, the paper's), 'class_mlp' (Table 4.3's Class-MLP: a class
            token updated by ``class_depth`` :class:`ClassMLPBlock` s, CaiT's class attention with linear layers)
            or '' (no pooling).
        norm: the pre-normalisation of every sublayer and the final one: 'affine' (the paper's), 'ln', 'bn'.
        cross_patch: the patch-communication sublayer, 'linear' (the paper's), 'mlp', 'none', 'conv3x3',
            'dwconv3x3' or 'dsconv3x3' (Table 4.3).
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
                 norm: str = 'affine', cross_patch: str = 'linear', class_depth: int = 2, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        if global_pool not in ('avg', 'class_mlp', ''):
            raise ValueError(f"ResMLP global_pool must be 'avg', 'class_mlp' or '', got {global_pool!r}")
        self._set_dims(num_classes, global_pool, embed_dim, depth)

        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        dpr = drop_path_rates(drop_path_rate, depth, drop_path_uniform)
        self.blocks = nn.ModuleList([
            ResMLPBlock(embed_dim, self.patch_embed.num_patches, mlp_ratio=mlp_ratio, init_values=init_values,
                        drop=proj_drop_rate, drop_path=dpr[i], norm=norm, cross_patch=cross_patch)
            for i in range(depth)])
        self.cls_token, self.blocks_token_only = None, None
        if global_pool == 'class_mlp':
            self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
            self.blocks_token_only = nn.ModuleList([
                ClassMLPBlock(embed_dim, self.patch_embed.num_patches, mlp_ratio=mlp_ratio, init_values=init_values,
                              norm=norm) for _ in range(class_depth)])
        self._build_head(resmlp_norm(norm, embed_dim) if final_norm else nn.Identity(), drop_rate)
        self._init_weights()
        if self.cls_token is not None:
            trunc_normal_(self.cls_token, std=.02)

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
        """(B, 3, H, W) -> normalised patch tokens (B, N, C); with Class-MLP pooling, [class token, patches]
        (B, 1 + N, C)."""
        x = self.last_hidden(x).tokens
        if self.blocks_token_only is not None:
            cls_token = self.cls_token.expand(x.shape[0], -1, -1)
            for blk in self.blocks_token_only:
                cls_token = blk(x, cls_token)
            x = torch.cat([cls_token, x], dim=1)
        return self.norm(x)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        if self.global_pool == 'avg':
            x = x.mean(dim=1)
        elif self.global_pool == 'class_mlp':
            x = x[:, 0]
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_head(self.forward_features(x))


# the family's record (backbones/family.py): the cross-patch layers fix the grid to img_size
register_family(Family(name='resmlp', title='ResMLP', model_class=ResMLP, dense_type='ResMLP', fixed_grid=True,
                       checkpoint_formats=(RESMLP_TIMM, RESMLP_OFFICIAL)))
