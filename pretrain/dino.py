"""DINO (Caron et al., "Emerging Properties in Self-Supervised Vision Transformers", ICCV 2021) around any vitbench
backbone whose classifier-free forward (``num_classes=0``) gives one feature per image, in the conventions of the
official ``main_dino.py`` / ``vision_transformer.py`` (facebookresearch/dino). The thesis trains ResMLP with it
(Table 4.2, §4.3.3).

* student: backbone + :class:`DINOHead` (3-layer MLP with GELU, 2048 hidden, l2-normalised 256-d bottleneck, then
  a weight-normalised linear layer to ``out_dim`` = 65536 without bias whose norm is fixed to 1 when
  ``norm_last_layer``); it sees every crop: 2 global + N local (multi-crop);
* teacher: the same network without stochastic depth, started as a copy of the student and averaged toward it
  after every optimiser step (:func:`ema_update_`), its momentum rising from 0.996 to 1 on a cosine
  (:func:`cosine_value`); it sees the 2 global crops only and gets no gradient;
* loss (:func:`dino_loss`): cross-entropy between the teacher's centred and sharpened distribution
  ``softmax((t - center) / teacher_temp)`` and the student's ``log_softmax(s / student_temp)``, over every
  (teacher global crop, student crop) pair of different crops; the centre is an EMA (0.9) of the teacher's
  batch mean over all ranks (:func:`updated_center`); the teacher temperature warms up linearly per epoch
  (:func:`teacher_temperature`);
* training step (:meth:`DINO.train_step`): per-tensor gradient clipping to 3.0 (the official ``clip_gradients``),
  no gradient to the head's last layer during the first ``freeze_last_layer`` epochs, then the teacher update;
  :class:`DINOScheduleHook` sets the momentum, the teacher temperature and the cosine weight decay (0.04 -> 0.4,
  on the decayed parameter groups only) before every iteration.

The exported backbone (``backbone.pth``) is the teacher's: the official k-NN and linear evaluations read the
``teacher`` weights (``--checkpoint_key teacher``).

    model = dict(type='DINO', backbone=dict(type='vitbench.VisionTransformer', arch='vit_small_patch16_224',
                 drop_path_rate=0.1), out_dim=65536, data_preprocessor=dict(type='ClsDataPreprocessor'))
    custom_hooks = [dict(type='DINOScheduleHook'), dict(type='BackboneExportHook')]
"""
import math
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence, Union

import torch
import torch.nn.functional as F
from mmengine import dist
from mmengine.hooks import Hook
from mmengine.model import BaseModel, MMDistributedDataParallel, is_model_wrapper
from mmengine.optim import AmpOptimWrapper
from torch import nn
from torch.nn.init import trunc_normal_

from vitbench.registry import HOOKS, MODEL_WRAPPERS, MODELS

from .classifier import build_backbone


# --------------------------------------------------------------------------------------------- formulas
def cosine_value(base: float, final: float, it: int, total_iters: int, warmup_iters: int = 0,
                 start_warmup_value: float = 0.) -> float:
    """Iteration ``it`` of the official ``utils.cosine_scheduler``: linear from ``start_warmup_value`` to ``base``
    over ``warmup_iters`` (numpy's linspace, both ends included), then ``final + (base - final) / 2 *
    (1 + cos(pi * i / n))`` over the n = total - warmup remaining iterations (i from 0)."""
    if it < warmup_iters:
        return start_warmup_value + (base - start_warmup_value) * (it / (warmup_iters - 1) if warmup_iters > 1 else 0.)
    n = max(total_iters - warmup_iters, 1)
    i = min(it - warmup_iters, n - 1)
    return final + .5 * (base - final) * (1. + math.cos(math.pi * i / n))


def teacher_temperature(epoch: int, warmup_temp: float, temp: float, warmup_epochs: int) -> float:
    """The official ``teacher_temp_schedule[epoch]``: linspace(warmup_temp, temp, warmup_epochs), then temp."""
    if epoch >= warmup_epochs:
        return temp
    return warmup_temp + (temp - warmup_temp) * (epoch / (warmup_epochs - 1) if warmup_epochs > 1 else 0.)


def dino_loss(student_out: torch.Tensor, teacher_out: torch.Tensor, center: torch.Tensor, student_temp: float,
              teacher_temp: float, n_crops: int) -> torch.Tensor:
    """The official ``DINOLoss.forward`` (without its centre update). ``student_out``: (n_crops * B, K), crop-major;
    ``teacher_out``: (2 * B, K), the two global crops. Mean over the pairs (teacher crop i, student crop v != i) of
    the batch mean of ``-sum softmax((t_i - center) / teacher_temp) * log_softmax(s_v / student_temp)``."""
    student = (student_out.float() / student_temp).chunk(n_crops)
    teacher = F.softmax((teacher_out.float() - center) / teacher_temp, dim=-1).detach().chunk(2)
    total, terms = 0., 0
    for iq, q in enumerate(teacher):
        for v, s in enumerate(student):
            if v == iq:  # the same crop on both sides: no term
                continue
            total = total + torch.sum(-q * F.log_softmax(s, dim=-1), dim=-1).mean()
            terms += 1
    return total / terms


@torch.no_grad()
def updated_center(center: torch.Tensor, teacher_out: torch.Tensor, momentum: float) -> torch.Tensor:
    """``center * m + batch_mean * (1 - m)``, the batch mean of the teacher's outputs over every rank (the official
    ``update_center``: a summed all-reduce over the world's batch)."""
    batch_center = teacher_out.float().sum(dim=0, keepdim=True)
    dist.all_reduce(batch_center, op='sum')
    batch_center = batch_center / (len(teacher_out) * dist.get_world_size())
    return center * momentum + batch_center * (1. - momentum)


@torch.no_grad()
def ema_update_(teacher: nn.Module, student: nn.Module, momentum: float) -> None:
    """The official teacher update: every teacher parameter <- m * itself + (1 - m) * the student's."""
    for param_q, param_k in zip(student.parameters(), teacher.parameters()):
        param_k.mul_(momentum).add_(param_q.detach(), alpha=1. - momentum)


def clip_gradients_(module: nn.Module, clip: float) -> None:
    """The official ``utils.clip_gradients``: every parameter's gradient on its own scaled to norm <= clip."""
    for p in module.parameters():
        if p.grad is not None:
            coef = clip / (p.grad.norm(2) + 1e-6)
            if coef < 1:
                p.grad.mul_(coef)


# ---------------------------------------------------------------------------------------------- modules
class DINOHead(nn.Module):
    """The official ``DINOHead``: MLP (Linear [-> BN] -> GELU) x (nlayers - 1) -> Linear to ``bottleneck_dim``,
    l2 normalisation, weight-normalised Linear to ``out_dim`` (no bias, ``weight_g`` = 1, frozen when
    ``norm_last_layer``). Linear weights truncated-normal (std 0.02), biases 0."""

    def __init__(self, in_dim: int, out_dim: int, use_bn: bool = False, norm_last_layer: bool = True,
                 nlayers: int = 3, hidden_dim: int = 2048, bottleneck_dim: int = 256):
        super().__init__()
        nlayers = max(nlayers, 1)
        if nlayers == 1:
            self.mlp = nn.Linear(in_dim, bottleneck_dim)
        else:
            layers = []
            for i in range(nlayers - 1):
                layers.append(nn.Linear(in_dim if i == 0 else hidden_dim, hidden_dim))
                layers += [nn.BatchNorm1d(hidden_dim)] if use_bn else []
                layers.append(nn.GELU())
            layers.append(nn.Linear(hidden_dim, bottleneck_dim))
            self.mlp = nn.Sequential(*layers)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        self.last_layer = nn.utils.weight_norm(nn.Linear(bottleneck_dim, out_dim, bias=False))
        self.last_layer.weight_g.data.fill_(1)
        if norm_last_layer:
            self.last_layer.weight_g.requires_grad = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.last_layer(F.normalize(self.mlp(x), dim=-1, p=2))


def crop_groups(inputs: Union[torch.Tensor, Sequence[torch.Tensor]]) -> List[torch.Tensor]:
    """The batch's crops as groups of one resolution, each (B, views, 3, H, W): a 5-D tensor is one group, a list
    (multi-crop: :class:`pretrain.transforms.PackInputs` groups consecutive views of one size) several."""
    groups = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
    if not groups or any(g.dim() != 5 for g in groups):
        raise ValueError('DINO trains on crops of each image, inputs of shape (batch, views, 3, H, W) or a list of '
                         'them, one per crop size (a MultiView pipeline with the 2 global crops first), got '
                         f'{[tuple(g.shape) for g in groups]}')
    if groups[0].shape[1] < 2:
        raise ValueError(f'DINO needs the 2 global crops first, of one size: the first group has '
                         f'{groups[0].shape[1]} view(s) (MultiView lists the two global crops first)')
    return groups


@MODELS.register_module()
class DINO(BaseModel):
    """Args:
        backbone: the student's config (``type``, ``arch`` + overrides: build_backbone); the teacher is the same
            without stochastic depth (``drop_path_rate=0``, as the official teacher).
        out_dim, hidden_dim, bottleneck_dim, head_layers, use_bn_in_head, norm_last_layer: :class:`DINOHead`
            (official: 65536, 2048, 256, 3, False, True).
        momentum_teacher: the teacher momentum at the start (0.996), cosine to 1 (:class:`DINOScheduleHook`).
        teacher_temp, warmup_teacher_temp, warmup_teacher_temp_epochs: the teacher temperature (0.04, 0.04, 0
            by default; ViT-S/16 over 300 or 800 epochs: 0.07 after 30 epochs from 0.04).
        student_temp, center_momentum: 0.1 and 0.9.
        clip_grad: per-parameter gradient-norm clip (3.0; 0 or None: none).
        freeze_last_layer: epochs during which the head's last layer gets no gradient (1).
    """
    recipe = 'dino'

    def __init__(self, backbone: dict, out_dim: int = 65536, hidden_dim: int = 2048, bottleneck_dim: int = 256,
                 head_layers: int = 3, use_bn_in_head: bool = False, norm_last_layer: bool = True,
                 momentum_teacher: float = 0.996, teacher_temp: float = 0.04, warmup_teacher_temp: float = 0.04,
                 warmup_teacher_temp_epochs: int = 0, student_temp: float = 0.1, center_momentum: float = 0.9,
                 clip_grad: Optional[float] = 3.0, freeze_last_layer: int = 1,
                 data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        if not 0. <= momentum_teacher < 1.:
            raise ValueError(f'DINO momentum_teacher must be in [0, 1), got {momentum_teacher}')
        if min(teacher_temp, warmup_teacher_temp, student_temp) <= 0:
            raise ValueError(f'DINO temperatures must be > 0, got teacher_temp={teacher_temp}, '
                             f'warmup_teacher_temp={warmup_teacher_temp}, student_temp={student_temp}')
        if not 0. <= center_momentum < 1.:
            raise ValueError(f'DINO center_momentum must be in [0, 1), got {center_momentum}')
        student_backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=0)
        teacher_backbone, _, _ = build_backbone(dict(backbone, drop_path_rate=0.), num_classes=0)
        width = getattr(student_backbone, 'num_features', None)
        if not isinstance(width, int) or getattr(student_backbone, 'global_pool', 'avg') == '':
            raise ValueError(f'DINO backbone {self.arch!r}: needs one pooled feature per image (num_features and a '
                             f"global_pool other than ''), got global_pool={getattr(student_backbone, 'global_pool', None)!r}")
        head = dict(in_dim=width, out_dim=out_dim, use_bn=use_bn_in_head, norm_last_layer=norm_last_layer,
                    nlayers=head_layers, hidden_dim=hidden_dim, bottleneck_dim=bottleneck_dim)
        self.student = nn.Sequential(OrderedDict(backbone=student_backbone, head=DINOHead(**head)))
        self.teacher = nn.Sequential(OrderedDict(backbone=teacher_backbone, head=DINOHead(**head)))
        self.teacher.load_state_dict(self.student.state_dict())  # the official start: the student's weights
        self.teacher.requires_grad_(False)
        self.register_buffer('center', torch.zeros(1, out_dim))
        self.momentum_teacher, self.center_momentum, self.student_temp = momentum_teacher, center_momentum, student_temp
        self.teacher_temp, self.warmup_teacher_temp = teacher_temp, warmup_teacher_temp
        self.warmup_teacher_temp_epochs, self.clip_grad, self.freeze_last_layer = \
            warmup_teacher_temp_epochs, clip_grad, freeze_last_layer
        # set by DINOScheduleHook before every iteration; these are the values of the first one
        self.momentum, self.teacher_temp_now = momentum_teacher, warmup_teacher_temp if warmup_teacher_temp_epochs \
            else teacher_temp
        self.last_layer_frozen = freeze_last_layer > 0

    @property
    def backbone(self) -> nn.Module:
        """The exported backbone: the teacher's (what DINO's k-NN and linear evaluations read)."""
        return self.teacher.backbone

    def _multi_crop(self, net: nn.Sequential, groups: List[torch.Tensor]) -> torch.Tensor:
        """The official ``MultiCropWrapper``: the backbone on each resolution's crops at once (crop-major), the
        head on all the features together."""
        feats = [net.backbone(g.transpose(0, 1).flatten(0, 1)) for g in groups]
        return net.head(torch.cat(feats))

    def forward(self, inputs, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'tensor':
            return self.backbone(inputs)
        if mode == 'predict':
            raise ValueError('DINO has no validation metric: set val_dataloader, val_cfg and val_evaluator to None '
                             '(evaluate the backbone.pth downstream, e.g. by k-NN or linear probing)')
        raise ValueError(f"mode must be 'loss', 'predict' or 'tensor', got {mode!r}")

    def loss(self, inputs, data_samples=None) -> Dict[str, torch.Tensor]:
        groups = crop_groups(inputs)
        n_crops = sum(g.shape[1] for g in groups)
        with torch.no_grad():
            teacher_out = self._multi_crop(self.teacher, [groups[0][:, :2]])
        student_out = self._multi_crop(self.student, groups)
        loss = dino_loss(student_out, teacher_out, self.center, self.student_temp, self.teacher_temp_now, n_crops)
        self.center.copy_(updated_center(self.center, teacher_out, self.center_momentum))
        return dict(loss=loss, momentum=torch.tensor(self.momentum),
                    teacher_temp=torch.tensor(self.teacher_temp_now))

    def train_step(self, data, optim_wrapper) -> Dict[str, torch.Tensor]:
        return self.dino_step(data, optim_wrapper, self)

    def dino_step(self, data, optim_wrapper, runner: nn.Module) -> Dict[str, torch.Tensor]:
        """The official iteration: loss, backward, per-parameter clipping (after unscaling under AMP), no gradient
        to the last layer while it is frozen, optimiser step, then the teacher's EMA update. ``runner``: this
        model, or its :class:`DINODistributedDataParallel` wrapper (whose forward synchronises the gradients)."""
        with optim_wrapper.optim_context(runner):
            data = self.data_preprocessor(data, True)
            losses = runner(**data, mode='loss')
        parsed, log_vars = self.parse_losses(losses)
        optim_wrapper.backward(parsed)
        if optim_wrapper.should_update():
            if self.clip_grad:
                if isinstance(optim_wrapper, AmpOptimWrapper):
                    optim_wrapper.loss_scaler.unscale_(optim_wrapper.optimizer)
                clip_gradients_(self.student, self.clip_grad)
            if self.last_layer_frozen:
                for p in self.student.head.last_layer.parameters():
                    p.grad = None
            optim_wrapper.step()
            optim_wrapper.zero_grad()
            ema_update_(self.teacher, self.student, self.momentum)
        return log_vars


@MODEL_WRAPPERS.register_module()
class DINODistributedDataParallel(MMDistributedDataParallel):
    """mmengine's DDP wrapper, whose ``train_step`` would skip :meth:`DINO.train_step` (clipping, the frozen last
    layer, the teacher update): runs it with the wrapper's forward. ``model_wrapper_cfg=dict(type=
    'DINODistributedDataParallel')`` in DINO configs."""

    def train_step(self, data, optim_wrapper) -> Dict[str, torch.Tensor]:
        return self.module.dino_step(data, optim_wrapper, self)


@HOOKS.register_module()
class DINOScheduleHook(Hook):
    """Before every training iteration (global iteration it of total), sets DINO's official schedules: the teacher
    momentum ``cosine_value(momentum_teacher, 1, it, total)``, the teacher temperature of the epoch, whether the
    last layer is frozen (epoch < freeze_last_layer), and the weight decay ``cosine_value(weight_decay,
    weight_decay_end, it, total)`` of the parameter groups that decay (the others stay at 0). The learning rate
    (linear warm-up, cosine to min_lr) is mmengine's param_scheduler's."""
    priority = 'HIGH'

    def __init__(self, weight_decay_end: Optional[float] = 0.4):
        self.weight_decay_end = weight_decay_end
        self.base_wd: Dict[int, float] = {}

    @staticmethod
    def _model(runner) -> DINO:
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        if not isinstance(model, DINO):
            raise TypeError(f'DINOScheduleHook drives a DINO model, got {type(model).__name__}')
        return model

    def before_train(self, runner) -> None:
        self._model(runner)
        groups = runner.optim_wrapper.optimizer.param_groups
        self.base_wd = {i: g['weight_decay'] for i, g in enumerate(groups) if g.get('weight_decay', 0.) > 0}

    def before_train_iter(self, runner, batch_idx: int, data_batch=None) -> None:
        model = self._model(runner)
        it, total = runner.iter, runner.max_iters
        model.momentum = cosine_value(model.momentum_teacher, 1., it, total)
        model.teacher_temp_now = teacher_temperature(runner.epoch, model.warmup_teacher_temp, model.teacher_temp,
                                                     model.warmup_teacher_temp_epochs)
        model.last_layer_frozen = runner.epoch < model.freeze_last_layer
        if self.weight_decay_end is not None:
            groups = runner.optim_wrapper.optimizer.param_groups
            for i, base in self.base_wd.items():
                groups[i]['weight_decay'] = cosine_value(base, self.weight_decay_end, it, total)
