"""Parameter and FLOP counts (FLOPs as fvcore / mmengine count them: one multiply-add = one FLOP)."""
from math import prod
from typing import Tuple, Union

import torch
from torch import nn


def count_params(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def _sdpa_flop_jit(inputs, outputs) -> int:
    """q·kᵀ and attn·v of aten::scaled_dot_product_attention, which mmengine's analyzer does not know."""
    q, k, v = (inputs[i].type().sizes() for i in range(3))
    batch = prod(q[:-2])
    return batch * q[-2] * k[-2] * (q[-1] + v[-1])


def _baddbmm_flop_jit(inputs, outputs) -> int:
    """The product of aten::baddbmm (ResMLP's cross-patch layer, CaiT's head mixing), as bmm counts it."""
    a, b = inputs[1].type().sizes(), inputs[2].type().sizes()
    return prod(a) * b[-1]


class _AllTokens(nn.Module):
    """A classifier's forward with every token through every block, as the papers count FLOPs
    (``forward`` itself lets the last block skip the patch tokens a class-token head never reads)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model.forward_head(self.model.forward_features(x))


def count_flops(model: nn.Module, img_size: Union[int, Tuple[int, int]] = 224, in_chans: int = 3) -> int:
    """FLOPs of one forward pass on a single image, with mmengine's FlopAnalyzer (jit trace).

    Classifiers are counted with all tokens through all blocks (the papers' convention); dense backbones
    (``forward`` returns feature maps) as they run. Parallel blocks are counted branch by branch: their fused form
    does the same per-image work, but a trace would also count building its stacked weights from the branches'
    (done once per weight update, not per image).
    """
    h, w = (img_size, img_size) if isinstance(img_size, int) else img_size
    x = torch.zeros(1, in_chans, h, w, device=next(model.parameters()).device)
    was_training = model.training
    model.eval()
    traced = _AllTokens(model) if hasattr(model, 'forward_head') and not hasattr(model, 'out_indices') else model
    fused = [m for m in model.modules() if getattr(m, 'fused', False) is True and hasattr(m, 'forward_sequential')]
    for m in fused:
        m.fused = False
    try:
        return int(flop_analyzer(traced, (x,)).total())
    finally:
        model.train(was_training)
        for m in fused:
            m.fused = True


def flop_analyzer(module: nn.Module, inputs: tuple):
    """mmengine's FlopAnalyzer of ``module(*inputs)`` (jit trace), knowing the attention and ``baddbmm`` ops of
    the suite's models, quiet about the ops it does not count (most element-wise ones)."""
    from mmengine.analysis import FlopAnalyzer
    analyzer = FlopAnalyzer(module, inputs)
    analyzer.set_op_handle('aten::scaled_dot_product_attention', _sdpa_flop_jit)
    analyzer.set_op_handle('aten::baddbmm', _baddbmm_flop_jit)
    analyzer.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
    return analyzer
