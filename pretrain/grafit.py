"""Grafit (Touvron, Sablayrolles, Douze, Cord, Jégou, ICCV 2021; Touvron thesis ch. 2): learning fine-grained
image representations from coarse labels, around any backbone of the suite (timm's ResNet-50 / ResNet-18 as
``timm:resnet50``, the suite's ViTs), and the baselines the chapter compares it with, as switches of one model
(the rows of thesis Table 2.7):

* the trunk f and a projector P (``projector='mlp'``: Linear(d, 4096) -> BN -> ReLU -> Linear(4096, 256), BYOL's,
  ~9.4M parameters on a ResNet-50, Table 2.7's 32.9M; ``'fc'``: one Linear(d, 128), Grafit FC, Wu et al.'s 128-d
  projection, 23.8M), giving the embedding g = P(f(x)), l2-normalised;
* ``knn`` (Eqs. 2.2-2.3, Wu et al. 2018's SNCA loss): each image picks a neighbour j ≠ i of a memory of the
  training set's embeddings with p_ij ∝ exp(cos(g(x_i), m_j) / σ); the loss is −log of the probability mass on
  the memory entries of its own (coarse) label. The memory is updated with the batch, m_i ← ½(m_i + g(x_i))
  (§2.3.1), and re-normalised (Wu et al.'s memory holds unit vectors); an entry not yet seen takes no part;
* ``inst`` (Eq. 2.1, BYOL's): T augmentations of each image; the predictor q (BYOL's MLP, 256 -> 4096 -> 256)
  of the online embedding of view i against the target network's embedding of view j, −mean over i ≠ j of their
  cosine; the target (trunk + projector) is an exponential moving average of the online one, ξ ← τξ + (1−τ)θ;
* ``ce``: a linear classifier on f with cross-entropy on the (coarse) labels: the chapter's baseline alone, and
  with ``triplet`` its "L_CE + L_Triplet" proxy of Grafit (§2.2, Tables 2.1-2.2);
* ``triplet``: a triplet loss between instances (§2.2: "differentiate between image instances", no labels):
  anchor view 1, positive view 2 of the same image, negative the hardest other image's view 2 of the batch, on
  l2-normalised trunk features; the chapter gives no margin: 0.2, FaceNet's, is this suite's choice.

Grafit is ``losses=('knn', 'inst')`` (Eq. 2.4: their sum; ``weights`` scales them, Table 2.11); SNCA+ is
``('knn',)`` with the MLP projector; the baseline ``('ce',)``; the proxy ``('ce', 'triplet')``. At test time
only f and P are kept (§2.3.1): the export (``backbone.pth``) is the trunk, and frozen-feature evaluation
(downstream/frozen) takes the projector from the training's checkpoint when it is given one.

The kNN loss, memory and views need the image's index in the training set (``PackInputs(keys=['sample_idx'])``)
and the training set's size (``memory_size``). Under several processes each rank updates its memory with its own
batch only, so each rank's memory holds its share of the images (a limit of this version; the chapter does not say
how its memory was shared).
"""
from collections import OrderedDict
from typing import Dict, Optional, Sequence

import torch
import torch.nn.functional as F
from mmengine.model import BaseModel, ExponentialMovingAverage
from torch import nn

from vitbench.registry import MODELS

from .classifier import build_backbone

LOSSES = ('knn', 'inst', 'ce', 'triplet')


# --------------------------------------------------------------------------------------------- functions
def knn_loss(embeddings: torch.Tensor, labels: torch.Tensor, memory: torch.Tensor, memory_labels: torch.Tensor,
             own: torch.Tensor, sigma: float) -> torch.Tensor:
    """Eqs. 2.2-2.3, averaged over the batch: −log Σ_{j≠i, y_j=y_i} p_ij with p_ij ∝ exp(cos(g_i, m_j)/σ) over the
    memory entries j ≠ i that hold an embedding (``memory_labels >= 0``). ``own``: each image's memory index."""
    g = F.normalize(embeddings.float(), dim=1)
    logits = g @ F.normalize(memory.float(), dim=1).T / sigma
    usable = memory_labels[None, :] >= 0
    usable = usable & (torch.arange(len(memory), device=g.device)[None, :] != own[:, None])
    same = usable & (memory_labels[None, :] == labels[:, None])
    all_mass = torch.logsumexp(logits.masked_fill(~usable, float('-inf')), dim=1)
    same_mass = torch.logsumexp(logits.masked_fill(~same, float('-inf')), dim=1)
    has_positive = same.any(1)  # an image whose label the memory holds nowhere else: no term (Wu et al. skip it)
    loss = (all_mass - same_mass)[has_positive]
    return loss.mean() if len(loss) else embeddings.sum() * 0.0


def instance_loss(predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Eq. 2.1, averaged over the batch: −Σ_{i≠j} cos(q(g(t_i x)), g_ξ(t_j x)) / (T(T−1)), for (B, T, D)
    online predictions and target embeddings."""
    views = predictions.shape[1]
    if views < 2:
        raise ValueError(f'the instance loss compares T >= 2 views of each image, got {views}')
    p, z = F.normalize(predictions.float(), dim=2), F.normalize(targets.float(), dim=2)
    cos = torch.einsum('bid,bjd->bij', p, z)
    off_diagonal = ~torch.eye(views, dtype=torch.bool, device=cos.device)
    return -(cos[:, off_diagonal].sum(1) / (views * (views - 1))).mean()


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, margin: float = 0.2) -> torch.Tensor:
    """Anchor i, positive i (another view of image i), negative the positive of another image closest to anchor i;
    on l2-normalised features, max(0, |a − p| − |a − n| + margin), averaged."""
    a, p = F.normalize(anchor.float(), dim=1), F.normalize(positive.float(), dim=1)
    distance = torch.cdist(a, p)
    negatives = distance + torch.eye(len(a), device=a.device) * 1e4  # never oneself
    return F.relu(distance.diagonal() - negatives.min(1).values + margin).mean()


def mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    """BYOL's projector / predictor: Linear -> BN -> ReLU -> Linear."""
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True),
                         nn.Linear(hidden, out_dim))


# ---------------------------------------------------------------------------------------------- module
@MODELS.register_module()
class Grafit(BaseModel):
    """Args:
        backbone: the trunk's config (``arch`` + overrides: build_backbone; ``timm:resnet50`` or a suite variant).
        num_classes: the training labels' classes (coarse: CIFAR-100's 20, ...), for ``ce``.
        memory_size: images in the training set (the kNN memory's rows).
        losses: a subset of :data:`LOSSES` (module docstring); ``weights``: a factor per loss (default 1).
        projector: 'mlp' (Grafit, SNCA+) or 'fc' (Grafit FC); dim / hidden: its widths.
        sigma: the kNN loss's temperature σ (thesis §2.4.3: 0.05).
        target_decay: τ of the target network.
        triplet_margin: the triplet loss's margin.
    """
    recipe = 'grafit'

    def __init__(self, backbone: dict, num_classes: int, memory_size: int, losses: Sequence[str] = ('knn', 'inst'),
                 weights: Optional[Dict[str, float]] = None, projector: str = 'mlp', dim: Optional[int] = None,
                 hidden: int = 4096, sigma: float = 0.05, target_decay: float = 0.99, triplet_margin: float = 0.2,
                 data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        unknown = sorted(set(losses) - set(LOSSES))
        if unknown or not losses:
            raise ValueError(f'Grafit losses: expected a non-empty subset of {LOSSES}, got {tuple(losses)}')
        if projector not in ('mlp', 'fc'):
            raise ValueError(f"Grafit projector: 'mlp' (Grafit, SNCA+) or 'fc' (Grafit FC), got {projector!r}")
        if sigma <= 0 or not 0 < target_decay < 1:
            raise ValueError(f'Grafit: sigma must be > 0 and target_decay in (0, 1), got {sigma}, {target_decay}')
        self.backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=0)
        width = self.backbone.num_features
        dim = dim or (256 if projector == 'mlp' else 128)
        self.losses, self.weights = tuple(losses), dict(weights or {})
        self.sigma, self.triplet_margin = sigma, triplet_margin
        if {'knn', 'inst'} & set(losses):
            self.projector = mlp(width, hidden, dim) if projector == 'mlp' else nn.Linear(width, dim)
        if 'inst' in losses:
            self.predictor = mlp(dim, hidden, dim)
            self.target = ExponentialMovingAverage(self._online(), momentum=1.0 - target_decay)
        if 'ce' in losses:
            self.classifier = nn.Linear(width, num_classes)
        if 'knn' in losses:
            self.register_buffer('memory', F.normalize(torch.randn(memory_size, dim), dim=1))
            self.register_buffer('memory_labels', torch.full((memory_size,), -1, dtype=torch.long))

    def _online(self) -> nn.Sequential:
        return nn.Sequential(OrderedDict(backbone=self.backbone, projector=self.projector))

    def forward(self, inputs: torch.Tensor, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'tensor':
            return self.backbone(inputs)
        raise ValueError("Grafit has no validation metric: evaluate its backbone.pth frozen (downstream/frozen, "
                         "k-NN and retrieval) or fine-tuned; mode must be 'loss' or 'tensor'")

    def loss(self, inputs: torch.Tensor, data_samples) -> Dict[str, torch.Tensor]:
        if inputs.dim() == 4:
            inputs = inputs[:, None]  # one view
        batch, views = inputs.shape[:2]
        if {'inst', 'triplet'} & set(self.losses) and views < 2:
            raise ValueError(f'Grafit {self.losses}: the instance / triplet losses need >= 2 views of each image '
                             f'(a MultiView pipeline), got inputs of shape {tuple(inputs.shape)}')
        labels = data_samples['gt_label'].to(inputs.device).long().view(-1)
        features = self.backbone(inputs.flatten(0, 1)).view(batch, views, -1)
        out = {}
        if 'ce' in self.losses:
            out['loss_ce'] = F.cross_entropy(self.classifier(features.flatten(0, 1)), labels.repeat_interleave(views))
        if 'triplet' in self.losses:
            out['loss_triplet'] = triplet_loss(features[:, 0], features[:, 1], self.triplet_margin)
        if {'knn', 'inst'} & set(self.losses):
            embeddings = self.projector(features.flatten(0, 1)).view(batch, views, -1)
        if 'knn' in self.losses:
            if 'sample_idx' not in data_samples:
                raise KeyError("Grafit's kNN loss needs each image's index in the training set: add "
                               "keys=['sample_idx'] to the pipeline's PackInputs")
            index = data_samples['sample_idx'].to(inputs.device).long().view(-1)
            if int(index.max()) >= len(self.memory):
                raise IndexError(f'Grafit: image index {int(index.max())} but memory_size is {len(self.memory)}: '
                                 'set memory_size to the number of training images')
            out['loss_knn'] = torch.stack([knn_loss(embeddings[:, v], labels, self.memory, self.memory_labels, index,
                                                    self.sigma) for v in range(views)]).mean()
            with torch.no_grad():  # m_i <- (m_i + g(x_i)) / 2, g the views' mean embedding, then unit norm
                g = F.normalize(F.normalize(embeddings.float(), dim=2).mean(1), dim=1)
                seen = self.memory_labels[index] >= 0
                update = torch.where(seen[:, None], 0.5 * (self.memory[index] + g), g)
                self.memory[index] = F.normalize(update, dim=1)
                self.memory_labels[index] = labels
        if 'inst' in self.losses:
            predictions = self.predictor(embeddings.flatten(0, 1)).view(batch, views, -1)
            with torch.no_grad():
                self.target.update_parameters(self._online())
                target = self.target.module
                targets = target.projector(target.backbone(inputs.flatten(0, 1))).view(batch, views, -1)
            out['loss_inst'] = instance_loss(predictions, targets)
        return {k: v * self.weights.get(k[len('loss_'):], 1.0) for k, v in out.items()}
