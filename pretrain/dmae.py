"""Distilled MAE (MAE-lite, Wang et al., ICML 2023, §5): MAE pre-training of a small ViT with distillation from a
frozen, larger MAE encoder, on both targets of the official code (``mae_lite_distill_exp.py``).

The teacher (e.g. MAE-Base) sees the *same visible patches* as the student. The loss adds, per distilled pair of
student / teacher layers,

* attention maps (``distill_layers``, blocks s, t; default: the last block of both, the paper's choice):
  ``alpha * MSE(A_t, M(A_s))``, A the pre-softmax scaled attention logits q·kᵀ/√d over the visible tokens,
  class token included (B, heads, 1 + K, 1 + K), and M a learnable head mapping: a 1x1 convolution over the
  heads (student heads -> teacher heads, no bias), as the official ``use_attn_adapter``;
* hidden states (``distill_hidden_layers``, positions s, t in 0..depth; default: none, as the official
  ``distill_hidden_idx=()``): ``hidden_alpha * MSE(H_t, W H_s)``, H the official hidden state
  (:func:`pretrain.mae.encode_visible`: the norm1-normalised input of block h, the final norm's output at
  h = depth) over the same tokens, and W a learnable linear adapter (student width -> teacher width, no bias;
  the official ``use_hidden_adapter``). The official loop passes the teacher's state to the adapter by mistake
  (``adapter(h_s, h_t)``), so its hidden option never ran; this is the loss it spells out.

MAE-lite §5 / Fig. 7 compares the layers (last block, all blocks, single lower blocks); the configs
``configs/pretrain/dmae_vit_tiny12h_in1k_400e*.py`` express the ablation.

    model = dict(type='DistilledMAE', backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224'),
                 decoder=dict(embed_dim=96, depth=1, num_heads=3),
                 teacher=dict(arch='deit_base_patch16_224', checkpoint='mae_pretrain_vit_base.pth'),
                 distill_layers=[-1], alpha=1.0, distill_hidden_layers=[], hidden_alpha=1.0)
"""
from typing import Dict, List, Sequence, Tuple, Union

import torch
import torch.nn.functional as F
from torch import nn

from vitbench.registry import MODELS

from .mae import MAE, encode_visible, encoder_checks
from .teacher import TeacherMixin, build_teacher


def layer_pairs(layers: Sequence[Union[int, Sequence[int]]], student_depth: int, teacher_depth: int,
                name: str = 'distill_layers', what: str = 'block') -> List[Tuple[int, int]]:
    """``[-1]`` -> [(last student block, last teacher block)]; ``[(s, t), ...]`` pairs are kept as given.
    Negative indices count from the end of each model. ``'all'``: every student position, each with the teacher's
    at the same relative depth (the same index when the depths are equal, MAE-lite's case).
    ``student_depth`` / ``teacher_depth``: the number of positions (blocks, or depth + 1 hidden states)."""
    if layers == 'all':
        return [(s, -(-(s + 1) * teacher_depth // student_depth) - 1) for s in range(student_depth)]  # ceil - 1
    if isinstance(layers, str):
        raise ValueError(f"{name}: expected 'all' or a list of {what}s / (student, teacher) pairs, got {layers!r}")
    pairs = []
    for item in layers:
        s, t = (item, item) if isinstance(item, int) else tuple(item)
        for i, depth, who in ((s, student_depth, 'student'), (t, teacher_depth, 'teacher')):
            if not -depth <= i < depth:
                raise ValueError(f'{name}: {what} {i} is out of range for the {who} ({depth} {what}s)')
        pairs.append((s % student_depth, t % teacher_depth))
    return pairs


@MODELS.register_module()
class DistilledMAE(TeacherMixin, MAE):
    """MAE plus attention and / or hidden-state distillation. Args as :class:`MAE`, and:

        teacher: teacher encoder config (:func:`pretrain.teacher.build_teacher`), e.g.
            ``dict(checkpoint='work_dirs/mae_vit_base_in1k_1600e/backbone.pth')``.
        distill_layers: attention maps of these blocks, ``[-1]`` (MAE-lite: the last block only),
            ``[(s, t), ...]`` pairs, ``'all'`` or ``[]`` (:func:`layer_pairs`).
        alpha: weight of the attention loss (MAE-lite: 1.0).
        distill_hidden_layers: hidden states 0..depth (0: embeddings, depth: final norm, ``-1``), pairs or
            ``'all'``.
        hidden_alpha: weight of the hidden-state loss (official ``distill_hidden_alpha``: 1.0).
    At least one of ``distill_layers`` and ``distill_hidden_layers`` must name a layer.
    """
    recipe = 'dmae'

    def __init__(self, backbone: dict, teacher: dict, distill_layers: Union[str, Sequence] = (-1,), alpha: float = 1.0,
                 distill_hidden_layers: Union[str, Sequence] = (), hidden_alpha: float = 1.0, **kwargs):
        super().__init__(backbone, **kwargs)
        teacher_model = build_teacher(teacher, num_classes=0)
        encoder_checks(teacher_model, 'distilled-MAE teacher')
        if tuple(teacher_model.patch_embed.patch_size) != tuple(self.backbone.patch_embed.patch_size):
            raise ValueError(f'the teacher must see the same patches as the student: teacher patch size '
                             f'{teacher_model.patch_embed.patch_size}, student {self.backbone.patch_embed.patch_size}')
        self.set_teacher(teacher_model)
        self.alpha, self.hidden_alpha = alpha, hidden_alpha
        student, teacher_depth = self.backbone, teacher_model.depth
        self.pairs = layer_pairs(distill_layers, student.depth, teacher_depth)
        self.hidden_pairs = layer_pairs(distill_hidden_layers, student.depth + 1, teacher_depth + 1,
                                        'distill_hidden_layers', 'hidden state')
        if not self.pairs and not self.hidden_pairs:
            raise ValueError('distill_layers and distill_hidden_layers are both empty: name at least one layer, '
                             'e.g. distill_layers=[-1] (the last block\'s attention, MAE-lite\'s choice)')
        self.head_maps = nn.ModuleList([
            nn.Conv2d(student.attention_heads(s), teacher_model.attention_heads(t), 1, bias=False)
            for s, t in self.pairs])
        self.hidden_adapters = nn.ModuleList([
            nn.Linear(self.backbone.embed_dim, teacher_model.embed_dim, bias=False) for _ in self.hidden_pairs])

    def distillation_losses(self, imgs: torch.Tensor, ids_keep: torch.Tensor,
                            student: Dict[str, Dict[int, torch.Tensor]]) -> Dict[str, torch.Tensor]:
        """The distillation terms, from the student's taps (:func:`pretrain.mae.encode_visible`)."""
        attn_layers, hidden_layers = [t for _, t in self.pairs], [t for _, t in self.hidden_pairs]
        depth = self.teacher.depth
        # the teacher runs as far as the deepest layer it is asked for (the final norm: all of it)
        last = max(attn_layers + [min(t, depth - 1) for t in hidden_layers])
        with torch.no_grad():
            _, teacher = encode_visible(self.teacher, imgs, ids_keep, attn_layers,
                                        last_block=None if depth in hidden_layers else last,
                                        hidden_layers=hidden_layers)
        losses = {}
        for (s, t), head_map in zip(self.pairs, self.head_maps):
            mapped = head_map(student['attn'][s])
            losses[f'loss_attn_s{s}_t{t}'] = self.alpha * F.mse_loss(mapped.float(), teacher['attn'][t].float())
        for (s, t), adapter in zip(self.hidden_pairs, self.hidden_adapters):
            mapped = adapter(student['hidden'][s])
            losses[f'loss_hidden_s{s}_t{t}'] = self.hidden_alpha * F.mse_loss(mapped.float(),
                                                                              teacher['hidden'][t].float())
        return losses

    def loss(self, inputs: torch.Tensor, data_samples=None) -> Dict[str, torch.Tensor]:
        pred, mask, ids_keep, taps = self.encode(inputs, attn_layers=[s for s, _ in self.pairs],
                                                 hidden_layers=[s for s, _ in self.hidden_pairs])
        return dict(loss_rec=self.reconstruction_loss(inputs, pred, mask),
                    **self.distillation_losses(inputs, ids_keep, taps))
