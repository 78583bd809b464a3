"""Building blocks of the ViT family, CaiT, ResMLP and PatchConvNet."""
from .attention import Attention, explicit_attention
from .blocks import Block, ClassAttentionBlock, ParallelBlock, drop_path_rates, make_drop_path, residual
from .cait_attention import ClassAttention, TalkingHeadAttention
from .conv_block import PatchConvBlock, trunk_norm
from .mlp import LayerScale, LayerScale2d, Mlp
from .per_class_head import PerClassHead
from .pos_embed import resample_pos_embed, square_grid
from .rel_pos import decomposed_rel_pos_bias, get_rel_pos, is_rel_pos_key, resize_rel_pos
from .resmlp_block import Affine, ClassMLPBlock, ResMLPBlock
from .stems import ConvStem, HMLPStem, LeViTStem, LinearPatchStem, PatchEmbed, to_2tuple
from .window import window_attention

__all__ = [
    'Attention', 'explicit_attention', 'Block', 'ClassAttentionBlock', 'ParallelBlock', 'drop_path_rates',
    'make_drop_path', 'residual', 'ClassAttention', 'TalkingHeadAttention', 'PatchConvBlock', 'trunk_norm',
    'LayerScale', 'LayerScale2d', 'Mlp', 'PerClassHead', 'resample_pos_embed', 'square_grid', 'decomposed_rel_pos_bias',
    'get_rel_pos', 'is_rel_pos_key', 'resize_rel_pos', 'Affine', 'ResMLPBlock', 'ClassMLPBlock',
    'ConvStem', 'HMLPStem', 'LeViTStem', 'LinearPatchStem', 'PatchEmbed', 'to_2tuple', 'window_attention',
]
