"""Building blocks of the ViT family and CaiT."""
from .attention import Attention, explicit_attention
from .blocks import Block, ClassAttentionBlock, ParallelBlock, drop_path_rates, residual
from .cait_attention import ClassAttention, TalkingHeadAttention
from .mlp import LayerScale, Mlp
from .pos_embed import resample_pos_embed, square_grid
from .stems import HMLPStem, PatchEmbed, to_2tuple
from .window import window_attention

__all__ = [
    'Attention', 'explicit_attention', 'Block', 'ClassAttentionBlock', 'ParallelBlock', 'drop_path_rates',
    'residual', 'ClassAttention', 'TalkingHeadAttention', 'LayerScale', 'Mlp', 'resample_pos_embed',
    'square_grid', 'HMLPStem', 'PatchEmbed', 'to_2tuple', 'window_attention',
]
