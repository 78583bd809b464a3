"""A backbone of the suite (any named variant, ``backbones.create_model``) and a linear head that predicts an image's
depth from its pooled features."""
import torch.nn as nn
from mmengine.model import BaseModel

from backbones import create_model
from vitbench.registry import MODELS


@MODELS.register_module()
class ToyDepthModel(BaseModel):
    def __init__(self, arch='vit_demo_patch8_64', img_size=32):
        super().__init__()
        self.backbone = create_model(arch, num_classes=0, img_size=img_size)
        self.head = nn.Linear(self.backbone.num_features, 1)
        nn.init.zeros_(self.head.weight)  # every image starts at the middle depth

    def forward(self, inputs, depth, mode='loss'):
        pred = 2.0 + self.head(self.backbone(inputs)).squeeze(1)  # 2: the middle of the depths
        if mode == 'loss':
            return dict(loss=nn.functional.l1_loss(pred, depth))
        return [dict(pred=p, depth=d) for p, d in zip(pred.detach(), depth)]  # what the metric reads
