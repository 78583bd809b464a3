"""A model of ones own for tests/test_timm_backbones.py: not a timm model, registered in timm's registry, with timm's
classifier API (forward_features, forward_head, num_features) and its dense one (forward_intermediates, feature_info)."""
import torch
from torch import nn
from timm.models import register_model


class TwoStage(nn.Module):
    def __init__(self, num_classes=1000, widths=(16, 24, 32, 48), **kwargs):
        super().__init__()
        layers, cin, self.feature_info = [], 3, []
        for i, w in enumerate(widths):
            layers.append(nn.Sequential(nn.Conv2d(cin, w, 3, stride=4 if i == 0 else 2, padding=1), nn.GELU()))
            self.feature_info.append(dict(num_chs=w, reduction=4 * 2 ** i, module=f'stages.{i}'))
            cin = w
        self.stages = nn.ModuleList(layers)
        self.num_features = cin
        self.num_classes = num_classes
        self.head = nn.Linear(cin, num_classes) if num_classes else nn.Identity()

    def forward_intermediates(self, x, indices=None, intermediates_only=False, **kwargs):
        out = []
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if indices is None or i in indices:
                out.append(x)
        return out if intermediates_only else (x, out)

    def forward_features(self, x):
        for stage in self.stages:
            x = stage(x)
        return x

    def forward_head(self, x, pre_logits=False):
        x = x.mean((2, 3))
        return x if pre_logits else self.head(x)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))


@register_model
def vitbench_test_two_stage(pretrained=False, **kwargs):
    return TwoStage(**kwargs)
