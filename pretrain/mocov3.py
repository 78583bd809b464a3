"""MoCo-v3 (Chen, Xie and He, ICCV 2021) around any vitbench backbone with a class token (:data:`MOCOV3_NEEDS`),
in the conventions of facebookresearch/moco-v3 and of MAE-lite's ``playground/mocov3`` (Wang et al., ICML 2023),
which pre-trains ViT-Tiny with it.

Two augmented views of each image (:class:`pretrain.ssl_transforms.MultiView`) go through

* the base encoder: the ViT (class token after the final norm), a 3-layer projector MLP and a 2-layer
  predictor MLP, giving queries q1, q2;
* the momentum encoder: an exponential moving average of ViT + projector (mmengine's
  ``ExponentialMovingAverage``), giving keys k1, k2 without gradient. Its momentum m rises from
  ``base_momentum`` (0.99) to 1 on a cosine over the training (:class:`MoCoMomentumHook`), and it is updated
  from the base encoder before the keys are computed, as the official ``forward``.

The MLPs are MoCo-v3's: Linear (no bias) -> BN -> ReLU per hidden layer, the last Linear followed by a BN
without affine parameters; 4096 hidden, 256 out. Their BNs normalise over the whole batch of all ranks
(:class:`pretrain.cross_rank.GlobalBatchNorm1d`, the official code converts to SyncBatchNorm). The loss is the
symmetric InfoNCE ``ctr(q1, k2) + ctr(q2, k1)``, each query against the keys of the whole batch (all ranks,
:func:`pretrain.cross_rank.gather_with_grad`), temperature 0.2, scaled by 2τ as the official code.

The ViT is initialised as MoCo-v3's ``VisionTransformerMoCo``: fixed 2-D sin-cos position embeddings (its
table: the row first, then the column), q/k/v weights uniform with the fan of each of the three, other linears
xavier-uniform, the patch projection xavier-uniform over its fan-in, class token N(0, 1e-6).
``stop_grad_conv1=True`` freezes the random patch projection (the paper's stability trick; MAE-lite keeps it
trainable).

    model = dict(type='MoCoV3', backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224'),
                 dim=256, mlp_dim=4096, temperature=0.2, base_momentum=0.99,
                 data_preprocessor=dict(type='ClsDataPreprocessor'))
    custom_hooks = [dict(type='MoCoMomentumHook'), dict(type='BackboneExportHook')]
"""
import math
from collections import OrderedDict
from typing import Dict, Optional

import torch
import torch.nn.functional as F
from mmengine.hooks import Hook
from mmengine.model import BaseModel, ExponentialMovingAverage, is_model_wrapper
from torch import nn

from backbones.contract import missing
from backbones.layers import PatchEmbed
from vitbench.refusal import RefusalValueError
from vitbench.registry import HOOKS, MODELS

from .classifier import build_backbone
from .cross_rank import GlobalBatchNorm1d, gather_with_grad, rank
from .mae import sincos_pos_embed


# --------------------------------------------------------------------------------------------- functions
def build_mlp(num_layers: int, in_dim: int, hidden_dim: int, out_dim: int) -> nn.Sequential:
    """MoCo-v3's ``_build_mlp``: [Linear -> BN -> ReLU] x (num_layers - 1), Linear -> BN(affine=False)."""
    layers = []
    for i in range(num_layers):
        last = i == num_layers - 1
        d_in, d_out = in_dim if i == 0 else hidden_dim, out_dim if last else hidden_dim
        layers.append(nn.Linear(d_in, d_out, bias=False))
        layers += [GlobalBatchNorm1d(d_out, affine=False)] if last else [GlobalBatchNorm1d(d_out), nn.ReLU(True)]
    return nn.Sequential(*layers)


def contrastive_loss(q: torch.Tensor, k: torch.Tensor, temperature: float) -> torch.Tensor:
    """InfoNCE of this rank's queries q (B, D) against the keys k of the whole batch (every rank's, gathered),
    the positive of query i being key i of the same rank; times 2τ (MoCo-v3's ``contrastive_loss``)."""
    q, k = F.normalize(q.float(), dim=1), F.normalize(k.float(), dim=1)
    logits = q @ gather_with_grad(k).t() / temperature
    labels = torch.arange(q.shape[0], device=q.device) + q.shape[0] * rank()
    return F.cross_entropy(logits, labels) * (2 * temperature)


def cosine_momentum(base: float, step: int, total: int) -> float:
    """MoCo-v3's ``adjust_moco_momentum`` at (fractional) progress step / total: ``base`` at the start, 1 at
    the end, on a half cosine."""
    return 1. - .5 * (1. + math.cos(math.pi * min(step / max(total, 1), 1.))) * (1. - base)


# what MoCo-v3 needs of its backbone (the family contract's capabilities, backbones/contract.py): the class token
# its feature is and its initialisation draws, a position-embedding table to fix to sin-cos
MOCOV3_NEEDS = ('class_token', 'pos_embed_table')


def mocov3_init_(vit: nn.Module) -> None:
    """``VisionTransformerMoCo``'s initialisation of a backbone with :data:`MOCOV3_NEEDS` (module docstring)."""
    for name, m in vit.named_modules():
        if isinstance(m, nn.Linear):
            if name.endswith('qkv'):  # q, k and v as three separate layers
                bound = math.sqrt(6. / float(m.weight.shape[0] // 3 + m.weight.shape[1]))
                nn.init.uniform_(m.weight, -bound, bound)
            else:
                nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
    nn.init.normal_(vit.cls_token, std=1e-6)
    if isinstance(getattr(vit, 'patch_embed', None), PatchEmbed):
        proj = vit.patch_embed.proj
        bound = math.sqrt(6. / float(proj.weight[0].numel() + proj.weight.shape[0]))
        nn.init.uniform_(proj.weight, -bound, bound)
        nn.init.zeros_(proj.bias)
    table = sincos_pos_embed(vit.embed_dim, vit.grid_size, vit.pos_embed_prefix)
    half = vit.embed_dim // 2  # MAE's table lists the column first; MoCo-v3's the row
    vit.pos_embed.data.copy_(torch.cat([table[..., half:], table[..., :half]], dim=-1))
    vit.pos_embed.requires_grad_(False)


# ---------------------------------------------------------------------------------------------- modules
@MODELS.register_module()
class MoCoV3(BaseModel):
    """Args:
        backbone: the encoder's config (``type``, ``arch`` + overrides: build_backbone); a backbone with
            :data:`MOCOV3_NEEDS` (a ViT with a class token; a family's capabilities: backbones/contract.py).
        dim: output width of projector and predictor (256).
        mlp_dim: hidden width of both MLPs (4096).
        temperature: τ of the InfoNCE loss (MoCo-v3 ViT and MAE-lite: 0.2).
        base_momentum: momentum at the start (0.99), raised to 1 by :class:`MoCoMomentumHook`.
        stop_grad_conv1: freeze the randomly initialised patch embedding (the whole stem for hMLP).
    """
    recipe = 'mocov3'
    needs = MOCOV3_NEEDS

    def __init__(self, backbone: dict, dim: int = 256, mlp_dim: int = 4096, temperature: float = 0.2,
                 base_momentum: float = 0.99, stop_grad_conv1: bool = False,
                 data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=0)
        vit = self.backbone
        lacking = missing(vit, MOCOV3_NEEDS)
        if lacking:
            raise ValueError(f'MoCoV3 encoder {self.arch!r}: needs {lacking}')
        if vit.global_pool != 'token':
            raise ValueError(f"MoCoV3 encoder {self.arch!r}: its feature is the class token, so global_pool must be "
                             f"'token', got {vit.global_pool!r}")
        if not 0. < base_momentum < 1.:
            raise ValueError(f'MoCoV3 base_momentum must be in (0, 1), got {base_momentum}')
        if temperature <= 0:
            raise ValueError(f'MoCoV3 temperature must be > 0, got {temperature}')
        mocov3_init_(vit)
        if stop_grad_conv1:
            vit.patch_embed.requires_grad_(False)
        self.projector = build_mlp(3, vit.embed_dim, mlp_dim, dim)
        self.predictor = build_mlp(2, dim, mlp_dim, dim)
        self.temperature, self.base_momentum, self.stop_grad_conv1 = temperature, base_momentum, stop_grad_conv1
        self.momentum = base_momentum  # MoCoMomentumHook sets it before every training iteration
        # a frozen copy of backbone + projector, averaged toward them (mmengine's momentum is 1 - m); its first
        # update copies them exactly, as the official initialisation
        self.momentum_encoder = ExponentialMovingAverage(self._base_encoder(), momentum=1. - base_momentum)

    def _base_encoder(self) -> nn.Sequential:
        """Backbone and projector under the names the momentum encoder's copies have (shares the modules)."""
        return nn.Sequential(OrderedDict(backbone=self.backbone, projector=self.projector))

    @torch.compiler.disable  # eager under --compile: traced, the momentum (a float that changes at every
    @torch.no_grad()         # iteration) was a constant of the graph, and the step recompiled at every iteration
    def update_momentum_encoder(self) -> torch.Tensor:
        """Averages the momentum encoder toward backbone + projector; returns the momentum it used (logged)."""
        self.momentum_encoder.momentum = 1. - self.momentum
        self.momentum_encoder.update_parameters(self._base_encoder())
        return torch.tensor(self.momentum)

    @staticmethod
    def _two_views(inputs: torch.Tensor):
        if inputs.dim() != 5 or inputs.shape[1] != 2:
            raise ValueError(f'MoCoV3 trains on two views of each image, inputs of shape (batch, 2, 3, H, W) '
                             f'(a MultiView pipeline with two views), got {tuple(inputs.shape)}')
        return inputs[:, 0], inputs[:, 1]

    def forward(self, inputs: torch.Tensor, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'tensor':
            return self.backbone(inputs)
        if mode == 'predict':
            raise RefusalValueError('MoCoV3 has no validation metric: set val_dataloader, val_cfg and val_evaluator to None '
                                    '(evaluate the backbone.pth downstream, e.g. by linear probing or fine-tuning)')
        raise ValueError(f"mode must be 'loss', 'predict' or 'tensor', got {mode!r}")

    def loss(self, inputs: torch.Tensor, data_samples=None) -> Dict[str, torch.Tensor]:
        x1, x2 = self._two_views(inputs)
        both = torch.cat([x1, x2])  # the ViT has no batch statistics: one pass for both views
        q1, q2 = (self.predictor(self.projector(f)) for f in self.backbone(both).chunk(2))
        with torch.no_grad():
            momentum = self.update_momentum_encoder()
            encoder = self.momentum_encoder.module
            k1, k2 = (encoder.projector(f) for f in encoder.backbone(both).chunk(2))  # BN statistics per view
        loss = contrastive_loss(q1, k2, self.temperature) + contrastive_loss(q2, k1, self.temperature)
        return dict(loss=loss, momentum=momentum)


@HOOKS.register_module()
class MoCoMomentumHook(Hook):
    """Before every training iteration, sets MoCo-v3's momentum to :func:`cosine_momentum` of the run's progress
    (``runner.iter / runner.max_iters``): from the model's ``base_momentum`` to 1 at the end of training."""

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        if not isinstance(model, MoCoV3):
            raise TypeError(f'MoCoMomentumHook drives a MoCoV3 model, got {type(model).__name__}')
        model.momentum = cosine_momentum(model.base_momentum, runner.iter, runner.max_iters)
