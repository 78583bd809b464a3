"""ImageNet classification with any vitbench backbone: supervised pre-training (DeiT, DeiT III), DeiT
distillation, and fine-tuning (full / attention-only / linear probe) from a pre-trained checkpoint.

    model = dict(
        type='ImageClassifier',
        backbone=dict(arch='deit3_base_patch16_224', drop_path_rate=0.1),  # create_model() name + overrides
        num_classes=1000,
        loss=dict(kind='bce'),                       # DeiT III; DeiT: dict(kind='ce', label_smoothing=0.1)
        data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=1000, mixup_alpha=0.8, cutmix_alpha=1.0))

The backbone is the whole named variant, classifier head included, so its width follows ``arch`` and
``--backbone NAME`` needs no adapter. ``backbone.init_cfg=dict(type='Pretrained', checkpoint=...)`` loads
weights through ``backbones.load_checkpoint`` (any supported format; position embeddings are resized for
resolution fine-tuning, a head of another size is re-initialised).
"""
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from mmengine.model import BaseModel
from torch import nn

from backbones import create_model
from vitbench.registry import MODELS

from .finetune import apply_trainable, keep_frozen_norms_in_eval
from .preprocessor import one_hot_targets
from .teacher import TeacherMixin, build_teacher


def build_backbone(cfg: dict, **extra):
    """``create_model(arch, **overrides)`` from a config dict; returns (model, arch, overrides)."""
    cfg = dict(cfg)
    if 'type' in cfg:
        raise ValueError(f"model.backbone takes create_model() arguments (arch=<named variant>, overrides...), "
                         f"not a registered type; got type={cfg['type']!r}")
    arch = cfg.pop('arch', None)
    if arch is None:
        raise ValueError("model.backbone needs 'arch': a named variant (tools/list_backbones.py lists them)")
    init_cfg = cfg.pop('init_cfg', None)
    model = create_model(arch, init_cfg=init_cfg, **dict(cfg, **extra))
    return model, arch, cfg


class ClsLoss(nn.Module):
    """Cross-entropy or binary cross-entropy on (possibly Mixup/CutMix-mixed) targets.

    ``kind='bce'`` is DeiT III's: ``binarize`` turns mixed targets into multi-hot ones (every class present
    in the mixed image is a positive), as the official ``targets.gt(0.0)``. ``label_smoothing`` applies to
    both kinds, after binarisation.
    """

    def __init__(self, kind: str = 'ce', label_smoothing: float = 0., binarize: bool = True):
        super().__init__()
        if kind not in ('ce', 'bce'):
            raise ValueError(f"loss kind must be 'ce' or 'bce', got {kind!r}")
        self.kind, self.label_smoothing, self.binarize = kind, label_smoothing, binarize

    def forward(self, logits: torch.Tensor, data_samples: dict) -> torch.Tensor:
        num_classes = logits.shape[-1]
        targets = one_hot_targets(data_samples, num_classes).to(logits.dtype)
        if self.kind == 'bce' and self.binarize:
            targets = targets.gt(0.).to(logits.dtype)
        if self.label_smoothing:
            targets = targets * (1 - self.label_smoothing) + self.label_smoothing / num_classes
        if self.kind == 'bce':
            return F.binary_cross_entropy_with_logits(logits, targets)
        return torch.sum(-targets * F.log_softmax(logits, dim=-1), dim=-1).mean()


def distillation_loss(student: torch.Tensor, teacher: torch.Tensor, kind: str, tau: float) -> torch.Tensor:
    """DeiT (Touvron et al., 2021) Eq. 2 / 3, as the official ``DistillationLoss``."""
    if kind == 'hard':
        return F.cross_entropy(student, teacher.argmax(dim=-1))
    return F.kl_div(F.log_softmax(student / tau, dim=-1), F.log_softmax(teacher / tau, dim=-1),
                    reduction='sum', log_target=True) * (tau * tau) / student.numel()


@MODELS.register_module()
class ImageClassifier(TeacherMixin, BaseModel):
    """Args:
        backbone: ``create_model`` arguments: ``arch`` (named variant), overrides (drop_path_rate, img_size,
            global_pool='avg' for global pooling + fc_norm, ...) and optionally ``init_cfg``.
        num_classes: classes of the head.
        loss: :class:`ClsLoss` arguments.
        trainable: 'all', 'attention' or 'linear' (see :mod:`pretrain.finetune`).
        probe_norm: linear probe only: a BatchNorm without affine parameters before the head (MAE's probe).
        distillation: DeiT distillation, ``dict(teacher=<teacher cfg>, kind='hard'|'soft', alpha=0.5,
            tau=1.0)``. A distilled variant (``*_distilled_*``) trains its distillation head on the teacher;
            any other backbone distils through its class head (CaiT's "hard distillation without token").
            loss = (1 - alpha) * loss(class head, labels) + alpha * distillation(dist head, teacher).
    """

    def __init__(self, backbone: dict, num_classes: int = 1000, loss: Optional[dict] = None,
                 trainable: str = 'all', probe_norm: bool = False, distillation: Optional[dict] = None,
                 data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=num_classes)
        self.trainable = trainable
        self.trainable_names = apply_trainable(self.backbone, trainable)
        if probe_norm and trainable != 'linear':
            raise ValueError("probe_norm=True is for linear probing (trainable='linear')")
        if probe_norm and getattr(self.backbone, 'distilled', False):
            raise ValueError('probe_norm is not supported for distilled (two-head) backbones')
        self.probe_norm = nn.BatchNorm1d(self.backbone.num_features, affine=False, eps=1e-6) if probe_norm else None
        self.loss_module = ClsLoss(**(loss or {}))

        self.distillation = None
        if distillation is not None:
            distillation = dict(distillation)
            teacher_cfg = distillation.pop('teacher')
            self.distillation = dict(dict(kind='hard', alpha=0.5, tau=1.0), **distillation)
            if self.distillation['kind'] not in ('hard', 'soft'):
                raise ValueError(f"distillation kind must be 'hard' or 'soft', got {self.distillation['kind']!r}")
            self.set_teacher(build_teacher(teacher_cfg, num_classes=num_classes))
            if getattr(self.backbone, 'distilled', False):
                self.backbone.set_distilled_training(True)

    @property
    def recipe(self) -> str:
        return 'supervised' if self.distillation is None else 'supervised_distilled'

    def train(self, mode: bool = True):
        super().train(mode)
        if self.trainable != 'all':
            keep_frozen_norms_in_eval(self.backbone)
        return self

    def logits(self, inputs: torch.Tensor):
        """Class logits; (class, distillation) logits for a distilled backbone in distillation training."""
        if self.probe_norm is None:
            return self.backbone(inputs)
        x = self.backbone.forward_head(self.backbone.forward_features(inputs), pre_logits=True)
        return self.backbone.head(self.probe_norm(x))

    def forward(self, inputs: torch.Tensor, data_samples: Optional[dict] = None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'predict':
            return self.predict(inputs, data_samples)
        if mode == 'tensor':
            return self.logits(inputs)
        raise ValueError(f"mode must be 'loss', 'predict' or 'tensor', got {mode!r}")

    def loss(self, inputs: torch.Tensor, data_samples: dict) -> Dict[str, torch.Tensor]:
        out = self.logits(inputs)
        if self.distillation is None:
            return dict(loss_cls=self.loss_module(out, data_samples))
        logits, logits_dist = out if isinstance(out, tuple) else (out, out)
        with torch.no_grad():
            teacher = self.teacher(inputs)
        d = self.distillation
        return dict(loss_cls=(1 - d['alpha']) * self.loss_module(logits, data_samples),
                    loss_dist=d['alpha'] * distillation_loss(logits_dist, teacher.float(), d['kind'], d['tau']))

    def predict(self, inputs: torch.Tensor, data_samples: Optional[dict] = None) -> List[dict]:
        scores = self.logits(inputs).float().softmax(dim=-1)
        labels = data_samples['gt_label'] if data_samples is not None else [None] * len(scores)
        return [dict(pred_score=s, gt_label=y) for s, y in zip(scores, labels)]
