"""Distilled MAE (MAE-lite, Wang et al., ICML 2023, §6): MAE pre-training of a small ViT with attention
distillation from a frozen, larger MAE encoder.

The teacher (e.g. MAE-Base) sees the *same visible patches* as the student. For every distilled pair of
blocks (student block s, teacher block t; default: the last block of both) the loss adds

    alpha * MSE(A_t, M(A_s))

where A are the pre-softmax scaled attention logits q·kᵀ/√d over the visible tokens, class token included
(B, heads, 1 + K, 1 + K), and M is a learnable head mapping: a 1x1 convolution over the heads
(student heads -> teacher heads, no bias), as the official ``use_attn_adapter``.

    model = dict(type='DistilledMAE', backbone=dict(arch='vit_tiny12h_patch16_224'),
                 decoder=dict(embed_dim=96, depth=1, num_heads=3),
                 teacher=dict(arch='deit_base_patch16_224', checkpoint='mae_pretrain_vit_base.pth'),
                 distill_layers=[-1], alpha=1.0)
"""
from typing import Dict, List, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from vitbench.registry import MODELS

from .mae import MAE, encode_visible, encoder_checks
from .teacher import TeacherMixin, build_teacher


def attention_heads(block: nn.Module) -> int:
    """Channels of a block's attention map: its heads, summed over the branches of a parallel block."""
    if hasattr(block, 'attns'):
        return sum(b.attn.num_heads for b in block.attns)
    return block.attn.num_heads


def layer_pairs(layers: Sequence[Union[int, Sequence[int]]], student_depth: int,
                teacher_depth: int) -> List[Tuple[int, int]]:
    """``[-1]`` -> [(last student block, last teacher block)]; ``[(s, t), ...]`` pairs are kept as given.
    Negative indices count from the end of each model."""
    pairs = []
    for item in layers:
        s, t = (item, item) if isinstance(item, int) else tuple(item)
        for i, depth, who in ((s, student_depth, 'student'), (t, teacher_depth, 'teacher')):
            if not -depth <= i < depth:
                raise ValueError(f'distill_layers: block {i} is out of range for the {who} ({depth} blocks)')
        pairs.append((s % student_depth, t % teacher_depth))
    if not pairs:
        raise ValueError('distill_layers is empty: give at least one block, e.g. [-1] (the last one)')
    return pairs


@MODELS.register_module()
class DistilledMAE(TeacherMixin, MAE):
    """MAE plus attention distillation. Args as :class:`MAE`, and:

        teacher: teacher encoder config (:func:`pretrain.teacher.build_teacher`), e.g.
            ``dict(checkpoint='work_dirs/mae_vit_base_in1k_1600e/backbone.pth')``.
        distill_layers: blocks to distil, ``[-1]`` (MAE-lite: the last block only) or ``[(s, t), ...]``.
        alpha: weight of the attention loss (MAE-lite: 1.0).
    """
    recipe = 'dmae'

    def __init__(self, backbone: dict, teacher: dict, distill_layers: Sequence = (-1,), alpha: float = 1.0,
                 **kwargs):
        super().__init__(backbone, **kwargs)
        teacher_model = build_teacher(teacher, num_classes=0)
        encoder_checks(teacher_model, 'distilled-MAE teacher')
        if tuple(teacher_model.patch_embed.patch_size) != tuple(self.backbone.patch_embed.patch_size):
            raise ValueError(f'the teacher must see the same patches as the student: teacher patch size '
                             f'{teacher_model.patch_embed.patch_size}, student {self.backbone.patch_embed.patch_size}')
        self.set_teacher(teacher_model)
        self.alpha = alpha
        self.pairs = layer_pairs(distill_layers, len(self.backbone.blocks), len(teacher_model.blocks))
        self.head_maps = nn.ModuleList([
            nn.Conv2d(attention_heads(self.backbone.blocks[s]), attention_heads(teacher_model.blocks[t]), 1,
                      bias=False) for s, t in self.pairs])

    def distillation_losses(self, imgs: torch.Tensor, ids_keep: torch.Tensor,
                            student_attn: Dict[int, torch.Tensor]) -> Dict[str, torch.Tensor]:
        teacher_layers = [t for _, t in self.pairs]
        with torch.no_grad():
            _, teacher_attn = encode_visible(self.teacher, imgs, ids_keep, teacher_layers,
                                             last_block=max(teacher_layers))
        losses = {}
        for (s, t), head_map in zip(self.pairs, self.head_maps):
            mapped = head_map(student_attn[s])
            losses[f'loss_attn_s{s}_t{t}'] = self.alpha * F.mse_loss(mapped.float(), teacher_attn[t].float())
        return losses

    def loss(self, inputs: torch.Tensor, data_samples=None) -> Dict[str, torch.Tensor]:
        pred, mask, ids_keep, attn = self.encode(inputs, attn_layers=[s for s, _ in self.pairs])
        return dict(loss_rec=self.reconstruction_loss(inputs, pred, mask),
                    **self.distillation_losses(inputs, ids_keep, attn))
