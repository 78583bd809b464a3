"""PatchConvNet (Touvron et al., "Augmenting Convolutional networks with attention-based aggregation";
thesis ch. 5): a convolutional stem to 16x16 patches, a column of residual convolutional blocks at constant
width and resolution, and attention-based pooling: one single-head class-attention block (a learned query,
the class token, attends over the patches), final norm, linear classifier.
"""
from typing import List, Optional

import torch
from mmengine.model import BaseModule
from torch import nn

from .block_walk import Hidden
from .cait import ClassAttentionHeadMixin, check_global_pool, class_attention_stage
from .checkpoint.formats import PATCHCONVNET_OFFICIAL
from .family import Family, register_family
from .layers import ConvStem, LinearPatchStem, PatchConvBlock, PerClassHead, drop_path_rates
from .vit import ViTFamilyMixin, layer_norm


class PatchConvNet(ClassAttentionHeadMixin, ViTFamilyMixin, BaseModule):
    """PatchConvNet with the official ``patchconvnet_models.py`` architecture (S60 ... L120).

    Args:
        embed_dim, depth: the trunk's width d and number of blocks N (S = 384, B = 768, L = 1024; S60: N = 60).
        norm: normalisation of the trunk blocks, 'ln' (the thesis' default) or 'bn' (Table 5.8). The
            pooling stage and the final norm are LayerNorms either way.
        init_values: LayerScale init of every block (official: 1e-4, 1e-6 for the 120-block models).
        num_heads, mlp_ratio_token_only, depth_token_only: the attention-based pooling (official: 1 head, an
            FFN of ratio 3, one block); ``depth_token_only=0`` builds the trunk alone (dense use).
        global_pool: 'token' (the class token, the paper's), 'avg' (average pooling, Table 5.7) or ''.
        stem: 'conv' (the paper's convolutional stem) or 'linear' (a linear patch projection, Table 5.7).
        num_heads: 1 (the paper's single-head pooling); Table 5.7's multi-head row: CaiT's 8 heads at width 384.
        drop_path_uniform: the same stochastic-depth rate in every block (the thesis: "a uniform drop rate").
        class_token_per_class: Table 5.7's "one class-token per class": a (num_classes, d) matrix of class
            tokens, each querying the patches alone (not the other class tokens), each read by its own linear map
            to its class' logit (:class:`~backbones.layers.PerClassHead`), as the official ``S60_multi``. Needs
            ``global_pool='token'``; ``forward_attention`` then gives one map per class. Without classes
            (``num_classes=0``) the pooling keeps a single class token.
        drop_rate: dropout before the classifier; proj_drop_rate / attn_drop_rate: in the pooling block.
    """
    checkpoint_optional = ('cls_token', 'blocks_token_only.', 'norm.', 'head.')
    checkpoint_may_miss = ('head.',)
    embedding_params = ('cls_token',)
    layer0_names = ('patch_embed',)  # the class token joins with the class-attention block
    num_prefix_tokens = 0  # the walk's tokens are the trunk's map, the class token comes after it

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, num_classes: int = 1000,
                 global_pool: str = 'token', embed_dim: int = 384, depth: int = 60, norm: str = 'ln',
                 init_values: float = 1e-4, num_heads: int = 1, mlp_ratio_token_only: float = 3.,
                 qkv_bias: bool = True, depth_token_only: int = 1, final_norm: bool = True,
                 drop_rate: float = 0., attn_drop_rate: float = 0., proj_drop_rate: float = 0.,
                 drop_path_rate: float = 0., drop_path_uniform: bool = True, norm_eps: float = 1e-6,
                 stem: str = 'conv', class_token_per_class: bool = False, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        if stem not in ('conv', 'linear'):
            raise ValueError(f"PatchConvNet stem must be 'conv' or 'linear', got {stem!r}")
        check_global_pool(global_pool, depth_token_only)
        if class_token_per_class and global_pool != 'token':
            raise ValueError("PatchConvNet class_token_per_class=True reads one class token per class: it needs "
                             f"global_pool='token', got {global_pool!r}")
        # without classes (num_classes=0: features only, e.g. counting the trunk) there is no token per class:
        # the pooling keeps the one class token
        class_token_per_class = class_token_per_class and num_classes > 0
        self.class_token_per_class = class_token_per_class
        norm_layer = layer_norm(norm_eps)
        self._set_dims(num_classes, global_pool, embed_dim, depth)

        self.patch_embed = (ConvStem if stem == 'conv' else LinearPatchStem)(img_size, patch_size, in_chans, embed_dim)
        dpr = drop_path_rates(drop_path_rate, depth, drop_path_uniform)
        self.blocks = nn.ModuleList([
            PatchConvBlock(embed_dim, init_values=init_values, drop_path=dpr[i], norm=norm, norm_eps=norm_eps)
            for i in range(depth)])
        self.cls_token, self.blocks_token_only = class_attention_stage(
            embed_dim, depth_token_only, num_tokens=num_classes if class_token_per_class else 1,
            num_heads=num_heads, mlp_ratio=mlp_ratio_token_only, qkv_bias=qkv_bias, init_values=init_values,
            attn_drop=attn_drop_rate, proj_drop=proj_drop_rate, norm_layer=norm_layer,
            queries_in_keys=not class_token_per_class)
        self._build_head(norm_layer(embed_dim) if final_norm else nn.Identity(), drop_rate)
        if class_token_per_class:
            self.head = PerClassHead(embed_dim, num_classes)
        self._init_weights()

    def _trunk_input(self, x: torch.Tensor, keep=None):
        """The stem's map in channels-last memory, the layout every trunk block reads and writes, and its grid."""
        x, grid = self.patch_embed(x)
        return x.contiguous(memory_format=torch.channels_last), grid

    def _input_norm(self, index: int) -> Optional[nn.Module]:
        # the trunk blocks' norms work on maps, not on the walk's tokens
        return super()._input_norm(index) if index == len(self.blocks) else None

    def _dense_map(self, hidden: Hidden, norm: bool) -> torch.Tensor:
        # the blocks' own map (channels-last), normalised over the channels
        return self.norm(hidden.state.permute(0, 2, 3, 1)).permute(0, 3, 1, 2) if norm else hidden.state

    @property
    def num_stage_tokens(self) -> int:
        return self.cls_token.shape[1] if self.cls_token is not None else 0

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        if not self.class_token_per_class:
            return super().forward_head(x, pre_logits)
        x = self.head_drop(x[:, :self.num_classes])  # (B, classes, C): class i's token gives its logit
        return x if pre_logits else self.head(x)

    @staticmethod
    def _tokens(x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) channels-last map -> (B, H * W, C) tokens, a view."""
        return x.permute(0, 2, 3, 1).flatten(1, 2)

    def forward_features(self, x: torch.Tensor, prefix_only: bool = False) -> torch.Tensor:
        """(B, 3, H, W) -> normalised [class token, patch tokens] (B, 1 + N, C), or (B, N, C) without the
        pooling stage; ``prefix_only``: just the class token (B, 1, C), all a class-token head reads."""
        return self.pool_features(self.last_hidden(x).tokens, prefix_only)

    @torch.no_grad()
    def forward_attention(self, x: torch.Tensor, kind: str = 'probs') -> List[torch.Tensor]:
        """The pooling's attention over the patches, one (B, heads, 1, H/p * W/p) map per class-attention
        block: one weight per patch, the thesis' saliency maps (Figs. 5.5, 5.6); with one class token per class,
        (B, heads, classes, H/p * W/p), a map per class (Fig. 5.6); ``kind``: 'probs' or 'logits'."""
        if self.blocks_token_only is None:
            raise ValueError('this PatchConvNet has no attention-based pooling (depth_token_only=0)')
        x = self.last_hidden(x).tokens
        cls_token, maps = self.cls_token.expand(x.shape[0], -1, -1), []
        for blk in self.blocks_token_only:
            cls_token, attn = blk(x, cls_token, return_attn=kind)
            # the patches' weights (a single class token also attends to itself; one per class only to patches)
            maps.append(attn if self.class_token_per_class else attn[..., 1:])
        return maps


# the family's record (backbones/family.py): the trunk's last map at every UperNet level, 512 channels from S up
# (thesis §5.3.3, Table 5.3)
register_family(Family(name='patchconvnet', title='PatchConvNet', model_class=PatchConvNet,
                       dense_type='PatchConvNet', upernet_levels='trunk_output', upernet_width='512_from_small',
                       checkpoint_formats=(PATCHCONVNET_OFFICIAL,)))
