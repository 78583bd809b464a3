"""The contribution of each residual branch, per block (CaiT Figure 4, thesis Figure 3.6): the ratio
``||g_l(x)||_2 / ||x||_2`` between the norm of a branch's output, as added to the main path (after its LayerScale or
scalar), and the norm of the main path it is added to, for the attention branch and the FFN branch of every block.

The blocks are run as the walk runs them (``iter_hidden``); the branch outputs are read by forward hooks on the
module that ends each branch: ``ls1`` / ``ls2`` where the block scales its branches, else ``attn`` / ``mlp``. Any
family whose blocks have these (ViT, DeiT III, CaiT's trunk, ResMLP) is measured; another is refused in one line.
The ratio is taken per token and averaged over tokens and images (the paper does not say how it pools them).
"""
from typing import Dict, List

import torch
from torch import nn

BRANCHES = (('attn', 'ls1', 'attn'), ('ffn', 'ls2', 'mlp'))  # (name, the scale ending it, the layer without one)


def _branch_end(blk: nn.Module, scale: str, layer: str) -> nn.Module:
    module = getattr(blk, scale, None)
    if module is None:
        module = getattr(blk, layer, None)
    if not isinstance(module, nn.Module):
        raise ValueError(f'residual ratios: {type(blk).__name__} has neither {scale!r} nor {layer!r}, the ends of '
                         'the two residual branches this analysis reads (sequential pre-norm blocks: ViT, CaiT, '
                         'ResMLP)')
    return module


@torch.no_grad()
def residual_ratios(model: nn.Module, images: torch.Tensor) -> Dict[str, List[float]]:
    """``{'attn': [ratio of block 0, ...], 'ffn': [...]}`` of ``model`` (eval mode, no drop path) on ``images``."""
    blocks = list(model.blocks)
    outputs: Dict[tuple, torch.Tensor] = {}
    handles = []
    for i, blk in enumerate(blocks):
        for name, scale, layer in BRANCHES:
            def keep(_module, _inputs, out, key=(i, name)):
                outputs[key] = out
            handles.append(_branch_end(blk, scale, layer).register_forward_hook(keep))
    was_training = model.training
    model.eval()
    sums = {name: [0.] * len(blocks) for name, _, _ in BRANCHES}
    try:
        hidden = [h.tokens for h in model.iter_hidden(images)]
    finally:
        for h in handles:
            h.remove()
        model.train(was_training)
    for i in range(len(blocks)):
        x = hidden[i]
        for name, _, _ in BRANCHES:
            g = outputs[(i, name)]
            x = x[:, x.shape[1] - g.shape[1]:]  # a block holding the prefix tokens out adds to the patches only
            ratio = g.norm(dim=-1) / x.norm(dim=-1).clamp_min(1e-12)
            sums[name][i] = ratio.mean().item()
            x = x + g  # the FFN branch reads the main path after the attention branch
    return sums
