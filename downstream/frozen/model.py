"""``FrozenFeatureModel``: any backbone of the suite (a registered variant, ``timm:NAME``, or a user's module built
from its config) as a feature extractor that is never trained: its pooled, pre-classifier embedding, optionally
followed by a projector (Grafit keeps its projector P at test time, thesis §2.3.1: ``g = P(f(x))``).

Weights come either from ``checkpoint`` (any format the suite's loader reads: backbones/checkpoint) or from the
runner (``tools/test.py CONFIG CHECKPOINT``): a bare backbone state dict (a vitbench ``backbone.pth``, a timm file)
is read as this model's ``backbone``; a training's runner checkpoint whose model has a ``backbone`` (and a
``projector``) loads as it is. A checkpoint that leaves any backbone weight unset is refused, rather than
evaluating a half-initialised network.
"""
from typing import Optional, Union

import torch
from mmengine.model import BaseModel
from torch import nn

from backbones import create_model
from vitbench.registry import MODELS


@MODELS.register_module()
class FrozenFeatureModel(BaseModel):
    """Args:
        arch: a variant name or ``timm:NAME``; or ``backbone``: a module or its registry config (a user's own), whose
            ``forward`` returns (B, D) embeddings or a tuple whose last item is a (B, C, H, W) map (average-pooled).
        checkpoint: weights for ``arch``, loaded by the suite's loader (None: the runner's, or none).
        overrides: constructor arguments of ``arch`` (img_size, global_pool, ...).
        projector: an optional module config applied to the embedding (Grafit's P).
        data_preprocessor: mmengine's, normalising the images (ImageNet mean / std by default).
    """

    def __init__(self, arch: Optional[str] = None, checkpoint: Optional[str] = None, overrides: Optional[dict] = None,
                 backbone: Union[nn.Module, dict, None] = None, projector: Optional[dict] = None,
                 data_preprocessor: Optional[dict] = None, init_cfg=None):
        data_preprocessor = data_preprocessor or dict(
            type='ImgDataPreprocessor', mean=[123.675, 116.28, 103.53], std=[58.395, 57.12, 57.375], bgr_to_rgb=False)
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        if (arch is None) == (backbone is None):
            raise ValueError("FrozenFeatureModel takes arch='NAME' (a variant or timm:NAME) or backbone=<module or "
                             'config>, one of the two')
        if arch is not None:
            self.backbone = create_model(arch, num_classes=0, checkpoint=checkpoint, **(overrides or {}))
        else:
            self.backbone = MODELS.build(backbone) if isinstance(backbone, dict) else backbone
        self.projector = MODELS.build(projector) if isinstance(projector, dict) else projector
        self.arch = arch
        self.requires_grad_(False)
        self.register_load_state_dict_pre_hook(FrozenFeatureModel._read_bare_backbone)  # torch's public hook

    def _read_bare_backbone(self, state_dict, prefix, *args):  # called as hook(module, state_dict, prefix, ...)
        """The runner's checkpoint, mmengine-loaded non-strictly: a bare backbone's keys are read as ``backbone.``;
        a checkpoint that misses any backbone weight is refused here (mmengine would only warn)."""
        if prefix:
            return
        if not any(k.startswith('backbone.') for k in state_dict):
            for key in list(state_dict):
                state_dict['backbone.' + key] = state_dict.pop(key)
        missing = [k for k in self.state_dict() if k.startswith('backbone.') and k not in state_dict]
        if missing:
            raise KeyError(f'FrozenFeatureModel: the checkpoint sets no value for {len(missing)} backbone weight(s) '
                           f'(first: {missing[0]}); expected a backbone state dict of {self.arch or "the backbone"} '
                           "or a runner checkpoint whose model has it as 'backbone'")

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        """(B, D) features: the backbone's pooled output, through the projector if any."""
        out = self.backbone(inputs)
        if isinstance(out, (tuple, list)):
            out = out[-1]
        if out.dim() == 4:
            out = out.mean((2, 3))  # a dense backbone's last map, average-pooled
        return self.projector(out) if self.projector is not None else out

    def forward(self, inputs, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            raise RuntimeError('FrozenFeatureModel is never trained: its backbone is evaluated frozen '
                               '(run it with tools/test.py)')
        return self.embed(inputs)
