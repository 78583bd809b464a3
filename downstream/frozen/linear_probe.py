"""A linear probe on frozen, cached features: DINO's ``eval_linear.py`` protocol (Caron et al. 2021) without its
crops: one ``nn.Linear`` (weights N(0, 0.01), zero bias) on the embedding, SGD with momentum 0.9, no weight
decay, learning rate ``0.001 × batch / 256`` annealed to 0 by a cosine over ``epochs`` (DINO: 100 epochs, batch
1024). ``batch_norm=True`` puts MAE's parameter-free BatchNorm before the linear layer (He et al. 2022, §A.2; MAE
trains it with LARS at lr 0.1 × batch / 256 for 90 epochs). The features are computed once, so the images are not
re-augmented each epoch: a documented difference from both protocols, which crop and flip at every epoch.
"""
import math

import torch
import torch.nn.functional as F
from torch import nn


def train_linear_probe(features: torch.Tensor, labels: torch.Tensor, num_classes: int, epochs: int = 100,
                       batch_size: int = 1024, base_lr: float = 0.001, momentum: float = 0.9,
                       weight_decay: float = 0.0, batch_norm: bool = False, seed: int = 0) -> nn.Module:
    """The trained probe: a module mapping (N, D) features to (N, classes) logits."""
    generator = torch.Generator().manual_seed(seed)
    linear = nn.Linear(features.shape[1], num_classes)
    with torch.no_grad():
        linear.weight.normal_(0.0, 0.01, generator=generator)
        linear.bias.zero_()
    probe = nn.Sequential(nn.BatchNorm1d(features.shape[1], affine=False), linear) if batch_norm else linear
    lr = base_lr * batch_size / 256
    optimizer = torch.optim.SGD(probe.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    steps_per_epoch = math.ceil(len(features) / batch_size)
    total = epochs * steps_per_epoch
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / total)))
    features, labels = features.float(), labels.long()
    probe.train()
    for _ in range(epochs):
        order = torch.randperm(len(features), generator=generator)
        for start in range(0, len(features), batch_size):
            index = order[start:start + batch_size]
            loss = F.cross_entropy(probe(features[index]), labels[index])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
    return probe.eval()
