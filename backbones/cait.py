"""CaiT: Class-Attention in Image Transformers (Touvron et al., "Going deeper with Image Transformers").

A trunk of ``depth`` self-attention blocks (talking-heads attention, LayerScale) over the patch tokens only,
then ``depth_token_only`` class-attention blocks that update the class token alone.
"""
import torch
from mmengine.model import BaseModule
from torch import nn

from .family import Family, register_family
from .layers import Block, ClassAttentionBlock, PatchEmbed, TalkingHeadAttention, resample_pos_embed
from .vit import ViTFamilyMixin, layer_norm


def check_global_pool(global_pool: str, depth_token_only: int):
    if global_pool not in ('token', 'avg', ''):
        raise ValueError(f"global_pool must be 'token', 'avg' or '', got {global_pool!r}")
    if global_pool == 'token' and not depth_token_only:
        raise ValueError("global_pool='token' reads the class token, which needs class-attention blocks "
                         "(depth_token_only > 0)")


def class_attention_stage(embed_dim: int, depth: int, num_tokens: int = 1, **block_kwargs):
    """(``num_tokens`` class tokens, ``depth`` class-attention blocks), or (None, None) without the stage (dense
    trunks)."""
    if not depth:
        return None, None
    return nn.Parameter(torch.zeros(1, num_tokens, embed_dim)), nn.ModuleList([
        ClassAttentionBlock(embed_dim, **block_kwargs) for _ in range(depth)])


class ClassAttentionHeadMixin:
    """The classifier end of CaiT and PatchConvNet: class-attention blocks (``blocks_token_only``) update the
    class token (``cls_token``) over the trunk's patch tokens, the final ``norm`` normalises, and the head
    reads the class token (``global_pool='token'``), the mean of the patch tokens ('avg') or nothing ('')."""

    def pool_features(self, x: torch.Tensor, prefix_only: bool = False) -> torch.Tensor:
        """Patch tokens (B, N, C) -> normalised [class token, patch tokens] (B, 1 + N, C), or (B, N, C) without
        the class-attention stage; ``prefix_only``: just the class token (B, 1, C). A distillation token
        (``dist_token``) joins the class token there: [class, distillation, patches]."""
        if self.blocks_token_only is not None:
            tokens = [t for t in (self.cls_token, getattr(self, 'dist_token', None)) if t is not None]
            cls_token = torch.cat(tokens, dim=1).expand(x.shape[0], -1, -1)
            for blk in self.blocks_token_only:
                cls_token = blk(x, cls_token)
            x = cls_token if prefix_only else torch.cat([cls_token, x], dim=1)
        return self.norm(x)

    def _final_features(self, tokens: torch.Tensor) -> torch.Tensor:
        # forward_intermediates' final features: the class-attention stage's output, as timm's CaiT
        return self.pool_features(tokens)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        if getattr(self, 'distilled', False):  # DeiT's two heads (backbones/vit.py): their mean in eval
            x, x_dist = self.head_drop(x[:, 0]), self.head_drop(x[:, 1])
            if pre_logits:
                return (x + x_dist) / 2
            x, x_dist = self.head(x), self.head_dist(x_dist)
            if self.distilled_training and self.training:
                return x, x_dist
            return (x + x_dist) / 2
        if self.global_pool == 'token':
            x = x[:, 0]
        elif self.global_pool == 'avg':
            x = x[:, 0 if self.blocks_token_only is None else self.num_stage_tokens:].mean(dim=1)
        x = self.head_drop(x)
        return x if pre_logits else self.head(x)

    @property
    def num_stage_tokens(self) -> int:
        """Tokens the class-attention stage updates: the class token, and the distillation token where present."""
        return 1 + int(getattr(self, 'dist_token', None) is not None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_head(self.forward_features(x, prefix_only=self.global_pool == 'token'))


class CaiT(ClassAttentionHeadMixin, ViTFamilyMixin, BaseModule):
    """CaiT with the official architecture; ``depth_token_only=0`` builds the SA trunk alone (dense use).

    Args mirror :class:`~backbones.vit.VisionTransformer`; ``init_values`` is the LayerScale init of every
    block (paper: 1e-5 up to depth 24, 1e-6 deeper) and stochastic depth is uniform, as in the paper.
    ``forward_intermediates`` / ``forward_attention`` read the self-attention trunk (talking-heads maps);
    the final features of ``forward_intermediates`` are after class attention, as timm's.
    ``distilled``: a distillation token at the input of the class-attention stage, beside the class token, with
    its own head (thesis Table 3.14; DeiT's two heads, ``forward_heads``, their mean in eval).
    """
    checkpoint_optional = ('blocks_token_only.', 'cls_token', 'dist_token', 'norm.', 'head.', 'head_dist.')
    checkpoint_may_miss = ('head.', 'head_dist.')
    no_embed_class = True
    pos_embed_prefix = 0
    embedding_params = ('pos_embed', 'cls_token', 'dist_token')
    num_prefix_tokens = 0  # the class token only joins in the class-attention stage, after the walk
    block_attention = True

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, num_classes: int = 1000,
                 global_pool: str = 'token', embed_dim: int = 192, depth: int = 24, num_heads: int = 4,
                 mlp_ratio: float = 4., qkv_bias: bool = True, init_values: float = 1e-5,
                 depth_token_only: int = 2, mlp_ratio_token_only: float = 4., final_norm: bool = True,
                 drop_rate: float = 0., attn_drop_rate: float = 0., proj_drop_rate: float = 0.,
                 drop_path_rate: float = 0., norm_eps: float = 1e-6, distilled: bool = False, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        check_global_pool(global_pool, depth_token_only)
        if distilled and (not depth_token_only or global_pool == 'avg'):
            raise ValueError("distilled=True puts the distillation token in the class-attention stage: it needs "
                             "depth_token_only > 0 and global_pool='token' (or '')")
        norm_layer = layer_norm(norm_eps)
        self._set_dims(num_classes, global_pool, embed_dim, depth)

        self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, self.patch_embed.num_patches, embed_dim))
        self.blocks = nn.ModuleList([
            Block(embed_dim, num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, init_values=init_values,
                  drop_path=drop_path_rate, attn_drop=attn_drop_rate, proj_drop=proj_drop_rate,
                  norm_layer=norm_layer, attn_layer=TalkingHeadAttention)
            for _ in range(depth)])
        self.cls_token, self.blocks_token_only = class_attention_stage(
            embed_dim, depth_token_only, num_heads=num_heads, mlp_ratio=mlp_ratio_token_only, qkv_bias=qkv_bias,
            init_values=init_values, norm_layer=norm_layer)
        self.distilled = distilled
        self.distilled_training = False
        self.dist_token = nn.Parameter(torch.zeros(1, 1, embed_dim)) if distilled else None
        self._build_head(norm_layer(embed_dim) if final_norm else nn.Identity(), drop_rate)
        self.head_dist = (nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()) \
            if distilled else None
        self._init_weights()

    def set_distilled_training(self, enable: bool = True):
        """In train mode, return (class logits, distillation logits) instead of their mean."""
        self.distilled_training = enable

    def forward_heads(self, x: torch.Tensor):
        """Distilled model: (class logits, distillation logits) of images (B, 3, H, W), in train and eval mode."""
        if not self.distilled:
            raise ValueError('forward_heads: this model has no distillation head (distilled=False)')
        x = self.forward_features(x, prefix_only=True)
        return self.head(self.head_drop(x[:, 0])), self.head_dist(self.head_drop(x[:, 1]))

    def _trunk_input(self, x: torch.Tensor, keep=None):
        x, grid = self.patch_embed(x)
        return x + resample_pos_embed(self.pos_embed, grid, self.grid_size), grid

    def forward_features(self, x: torch.Tensor, prefix_only: bool = False) -> torch.Tensor:
        """(B, 3, H, W) -> normalised [class token, patch tokens] (B, 1 + N, C), or (B, N, C) without CA.

        ``prefix_only`` returns just the normalised class token (B, 1, C), all a class-token head reads.
        """
        return self.pool_features(self.last_hidden(x).tokens, prefix_only)


# the family's record (backbones/family.py): global attention everywhere, any grid
register_family(Family(name='cait', title='CaiT', model_class=CaiT, dense_type='CaiT'))
