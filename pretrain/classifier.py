"""ImageNet classification with any vitbench backbone: supervised pre-training (DeiT, DeiT III), DeiT
distillation, and fine-tuning (full / attention-only / FFN-only / linear probe) from a pre-trained checkpoint.

    model = dict(
        type='ImageClassifier',
        backbone=dict(type='vitbench.VisionTransformer', arch='deit3_base_patch16_224', drop_path_rate=0.1),
        num_classes=1000,
        loss=dict(kind='bce'),                       # DeiT III; DeiT: dict(kind='ce', label_smoothing=0.1)
        data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=1000, mixup_alpha=0.8, cutmix_alpha=1.0))

The backbone config is the suite's one dialect (:func:`build_backbone`): the family's type, the named variant
(``create_model()`` name) and its overrides. The backbone is the whole named variant, classifier head included,
so its width follows ``arch`` and ``--backbone NAME`` needs no adapter.
``backbone.init_cfg=dict(type='Pretrained', checkpoint=...)`` loads weights through ``backbones.load_checkpoint``
(any supported format; position embeddings are resized for resolution fine-tuning, a head of another size is
re-initialised).
"""
from typing import Dict, List, Optional

import torch
import torch.nn.functional as F
from mmengine.model import BaseModel
from torch import nn

from backbones import create_model
from backbones.backbone_type import check_backbone_type
from vitbench.registry import MODELS

from .finetune import apply_trainable, keep_frozen_norms_in_eval
from .preprocessor import one_hot_targets
from .teacher import TeacherMixin, build_teacher


def build_backbone(cfg: dict, **extra):
    """``create_model(arch, **overrides)`` from a backbone config in the suite's one dialect,
    ``dict(type=<the family's registered type>, arch=<named variant>, **overrides)`` (backbones/backbone_type.py):
    the family's classifier model of ``arch``. ``type`` may be left out (the family follows from ``arch``); one
    of another family than ``arch``'s is refused. Returns (model, arch, overrides); the overrides hold neither, nor
    what the model only loaded at construction (``residual_scale_from``: the weights hold those scales, and the
    path would send a rebuild from an exported backbone.pth to another machine's file)."""
    cfg = dict(cfg)
    type_ = cfg.pop('type', None)
    arch = cfg.pop('arch', None)
    if arch is None:
        raise ValueError("model.backbone needs 'arch': a named variant (tools/list_backbones.py lists them)")
    check_backbone_type(type_, arch)
    init_cfg = cfg.pop('init_cfg', None)
    model = create_model(arch, init_cfg=init_cfg, **dict(cfg, **extra))
    return model, arch, {k: v for k, v in cfg.items() if k != 'residual_scale_from'}


class ClsLoss(nn.Module):
    """Cross-entropy or binary cross-entropy on (possibly Mixup/CutMix-mixed) targets.

    ``kind='bce'`` is DeiT III's: ``binarize`` turns mixed targets into multi-hot ones (every class present
    in the mixed image is a positive), as the official ``targets.gt(0.0)``; ``binarize_threshold`` raises that
    bar (ResNet strikes back's A1 / A2: 0.2, timm's ``--bce-target-thresh``). ``label_smoothing`` applies to
    both kinds, after binarisation.
    """

    def __init__(self, kind: str = 'ce', label_smoothing: float = 0., binarize: bool = True,
                 binarize_threshold: float = 0.):
        super().__init__()
        if kind not in ('ce', 'bce'):
            raise ValueError(f"loss kind must be 'ce' or 'bce', got {kind!r}")
        self.kind, self.label_smoothing, self.binarize = kind, label_smoothing, binarize
        self.binarize_threshold = binarize_threshold

    def forward(self, logits: torch.Tensor, data_samples: dict) -> torch.Tensor:
        num_classes = logits.shape[-1]
        targets = one_hot_targets(data_samples, num_classes).to(logits.dtype)
        if self.kind == 'bce' and self.binarize:
            targets = targets.gt(self.binarize_threshold).to(logits.dtype)
        if self.label_smoothing:
            targets = targets * (1 - self.label_smoothing) + self.label_smoothing / num_classes
        if self.kind == 'bce':
            return F.binary_cross_entropy_with_logits(logits, targets)
        return torch.sum(-targets * F.log_softmax(logits, dim=-1), dim=-1).mean()


DISTILL_INFERENCE = ('softmax_sum', 'logit_mean', 'class_head', 'distillation_head')
KL_NORMS = ('numel', 'batch')


def distillation_loss(student: torch.Tensor, teacher: torch.Tensor, kind: str, tau: float,
                      kl_norm: str = 'numel') -> torch.Tensor:
    """DeiT (Touvron et al., 2021; thesis Eq. 3.2 / 3.3), as the official ``DistillationLoss``.

    Soft: tau^2 * KL(softmax(teacher / tau) || softmax(student / tau)). ``kl_norm='numel'`` divides the summed
    KL by batch x classes, as the official code ("the legacy PyTorch behaviour"); ``'batch'`` by the batch only,
    the per-image KL of Eq. 3.2 (``numel`` makes the term 1/classes as large: 1000x on ImageNet).
    """
    if kind == 'hard':
        return F.cross_entropy(student, teacher.argmax(dim=-1))
    kl = F.kl_div(F.log_softmax(student / tau, dim=-1), F.log_softmax(teacher / tau, dim=-1),
                  reduction='sum', log_target=True) * (tau * tau)
    return kl / (student.numel() if kl_norm == 'numel' else student.shape[0])


def joint_scores(logits: torch.Tensor, logits_dist: torch.Tensor, rule: str) -> torch.Tensor:
    """Class scores of a two-head (distilled) model. ``'softmax_sum'``: the thesis' late fusion (§3.3, "we add
    the softmax output by the two classifiers"), halved so that the scores stay probabilities;
    ``'logit_mean'``: softmax of the mean of the two heads' logits, what the official code evaluates.
    ``'class_head'`` / ``'distillation_head'``: one head alone (thesis Table 3.3's "DeiT⚗ class embedding" and
    "distillation embedding" rows).
    The two argmaxes can differ when the heads disagree: a saturated softmax caps a head's vote at 1, a logit
    does not (tests/test_pretrain_recipes_deit_cait.py has such a case)."""
    if rule == 'softmax_sum':
        return (logits.float().softmax(dim=-1) + logits_dist.float().softmax(dim=-1)) / 2
    if rule in ('class_head', 'distillation_head'):
        return (logits if rule == 'class_head' else logits_dist).float().softmax(dim=-1)
    return ((logits.float() + logits_dist.float()) / 2).softmax(dim=-1)


@MODELS.register_module()
class ImageClassifier(TeacherMixin, BaseModel):
    """Args:
        backbone: ``type`` (the family's, optional), ``arch`` (named variant), ``create_model`` overrides
            (drop_path_rate, img_size, global_pool='avg' for global pooling + fc_norm, ...) and optionally
            ``init_cfg``; see :func:`build_backbone`.
        num_classes: classes of the head.
        loss: :class:`ClsLoss` arguments.
        trainable: 'all', 'attention', 'ffn' or 'linear' (see :mod:`pretrain.finetune`).
        probe_norm: linear probe only: a BatchNorm without affine parameters before the head (MAE's probe).
        distillation: DeiT distillation, ``dict(teacher=<teacher cfg>, kind='hard'|'soft', alpha=..., tau=3.0,
            kl_norm='numel')``. A distilled variant (``*_distilled_*``) trains its distillation head on the
            teacher; any other backbone distils through its class head (CaiT's "hard distillation without token").
            loss = (1 - alpha) * loss(class head, labels) + alpha * distillation(dist head, teacher).
            Defaults are the thesis' (§3.3): hard alpha 0.5; soft alpha (lambda) 0.1, tau 3.0 (the official
            ``main.py`` defaults are alpha 0.5, tau 1.0 for both). ``kl_norm``: see :func:`distillation_loss`.
        distill_inference: how a two-head (distilled) backbone scores in ``predict``: 'softmax_sum' (the
            thesis) or 'logit_mean' (the official code), or one head, 'class_head' / 'distillation_head'; see
            :func:`joint_scores`. Single-head backbones ignore it.
    """

    def __init__(self, backbone: dict, num_classes: int = 1000, loss: Optional[dict] = None,
                 trainable: str = 'all', probe_norm: bool = False, distillation: Optional[dict] = None,
                 distill_inference: str = 'softmax_sum', data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        if distill_inference not in DISTILL_INFERENCE:
            raise ValueError(f'model.distill_inference must be one of {DISTILL_INFERENCE}, got {distill_inference!r}')
        self.distill_inference = distill_inference
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
            unknown = set(distillation) - {'kind', 'alpha', 'tau', 'kl_norm'}
            if unknown:
                raise ValueError(f'model.distillation: unknown keys {sorted(unknown)}; expected teacher, kind, '
                                 'alpha, tau, kl_norm')
            d = dict(dict(kind='hard', alpha=None, tau=3.0, kl_norm='numel'), **distillation)
            if d['kind'] not in ('hard', 'soft'):
                raise ValueError(f"model.distillation.kind must be 'hard' or 'soft', got {d['kind']!r}")
            if d['kl_norm'] not in KL_NORMS:
                raise ValueError(f"model.distillation.kl_norm must be one of {KL_NORMS}, got {d['kl_norm']!r}")
            if d['alpha'] is None:
                d['alpha'] = 0.5 if d['kind'] == 'hard' else 0.1
            self.distillation = d
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
                    loss_dist=d['alpha'] * distillation_loss(logits_dist, teacher.float(), d['kind'], d['tau'],
                                                             d['kl_norm']))

    def predict(self, inputs: torch.Tensor, data_samples: Optional[dict] = None) -> List[dict]:
        if getattr(self.backbone, 'distilled', False):  # probe_norm is refused for two-head backbones
            scores = joint_scores(*self.backbone.forward_heads(inputs), self.distill_inference)
        else:
            scores = self.logits(inputs).float().softmax(dim=-1)
        labels = data_samples['gt_label'] if data_samples is not None else [None] * len(scores)
        return [dict(pred_score=s, gt_label=y) for s, y in zip(scores, labels)]
