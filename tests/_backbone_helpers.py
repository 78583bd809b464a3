"""Shared helpers of the backbone tests: reference timm models and official-format state dicts.

The official formats are written here by hand from timm's key names (the naming of facebookresearch/deit's
models_v2.py / cait_models.py and facebookresearch/mae's models_mae.py), independently of
backbones/checkpoint, so the tests check the loader against the formats rather than against itself.
"""
import re

import timm
import torch

# vitbench variant -> (timm model, extra timm arguments) where timm has no model of that exact name
TIMM_EQUIVALENT = {
    'deit3_small_patch16_36': ('vit_small_patch16_36x1_224', dict(no_embed_class=True, init_values=1e-4)),
    'deit3_base_patch16_36': ('vit_small_patch16_36x1_224',
                              dict(embed_dim=768, num_heads=12, no_embed_class=True, init_values=1e-4)),
    'deit3_small_patch16_18x2': ('vit_small_patch16_18x2_224', dict(no_embed_class=True, init_values=1e-4)),
    'deit3_base_patch16_18x2': ('vit_base_patch16_18x2_224', dict(no_embed_class=True, init_values=1e-4)),
    'cait_xs24_224': ('cait_xs24_384', {}),
    'cait_s36_224': ('cait_s36_384', {}),
    'vit_tiny12h_patch16_224': ('vit_tiny_patch16_224', dict(num_heads=12)),
    'vit_demo_patch8_64': ('vit_tiny_patch16_224', dict(patch_size=8)),
}


def small_size(name: str) -> int:
    """A small input size divisible by the variant's patch size."""
    return 56 if 'patch14' in name else 32 if 'patch8' in name else 64


def randomize(model: torch.nn.Module, seed: int = 0) -> torch.nn.Module:
    """Fill every parameter and buffer with seeded random values that exercise every path: weights at
    1/sqrt(fan_in) (so attention is far from uniform), LayerScale in [0.1, 0.6] (timm's DeiT III init of 1e-6
    would make the blocks near-identities), norms near 1, small biases and tokens."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for n, p in list(model.named_parameters()) + list(model.named_buffers()):
            leaf = n.rsplit('.', 1)[-1]
            if leaf.startswith('gamma'):
                v = torch.rand(p.shape, generator=g) * 0.5 + 0.1
            elif leaf in ('running_var', 'weight') and p.dim() == 1:
                v = 1 + 0.1 * torch.randn(p.shape, generator=g)
            elif leaf == 'num_batches_tracked':
                v = torch.zeros(p.shape)
            elif p.dim() >= 2 and leaf == 'weight':
                v = torch.randn(p.shape, generator=g) / p[0].numel() ** 0.5
            else:  # biases, running means, tokens, position embeddings
                v = 0.1 * torch.randn(p.shape, generator=g)
            p.copy_(v.to(p.dtype))
    return model


def materialize(build, *args, **kwargs) -> torch.nn.Module:
    """Build a model on the meta device (skipping its random init, the slow part of building big variants)
    and allocate it uninitialised on the CPU: fill it with ``randomize`` or a checkpoint afterwards."""
    with torch.device('meta'):
        model = build(*args, **kwargs)
    return model.to_empty(device='cpu')


def timm_model(name: str, **kwargs) -> torch.nn.Module:
    """timm's model for vitbench variant ``name`` (no download), randomized, in eval mode."""
    timm_name, extra = TIMM_EQUIVALENT.get(name, (name, {}))
    model = materialize(timm.create_model, timm_name, pretrained=False, **dict(extra, **kwargs))
    return randomize(model).eval()


# ---- official formats, written from timm key names ----
_PARALLEL = {'attns.0.norm': 'norm1', 'attns.0.attn': 'attn', 'attns.0.ls.gamma': 'gamma_1',
             'attns.1.norm': 'norm11', 'attns.1.attn': 'attn1', 'attns.1.ls.gamma': 'gamma_1_1',
             'ffns.0.norm': 'norm2', 'ffns.0.mlp': 'mlp', 'ffns.0.ls.gamma': 'gamma_2',
             'ffns.1.norm': 'norm21', 'ffns.1.mlp': 'mlp1', 'ffns.1.ls.gamma': 'gamma_2_1'}


def deit3_official(sd: dict) -> dict:
    """timm DeiT III / parallel state dict -> facebookresearch/deit models_v2.py file ({'model': ...})."""
    out = {}
    for k, v in sd.items():
        for ours, theirs in _PARALLEL.items():
            k = re.sub(rf'^(blocks\.\d+)\.{re.escape(ours)}(\.|$)', rf'\1.{theirs}\2', k)
        k = re.sub(r'^(blocks\.\d+)\.ls([12])\.gamma$', r'\1.gamma_\2', k)
        out[k] = v
    return {'model': out}


def cait_official(sd: dict) -> dict:
    """timm CaiT state dict (already the official names) -> official file, saved from DDP ('module.')."""
    return {'model': {'module.' + k: v for k, v in sd.items()}}


def mae_pretrain_official(sd: dict, decoder_dim: int = 32, patch_dim: int = 16 * 16 * 3) -> dict:
    """timm ViT (class-token position row, final norm) -> facebookresearch/mae pre-training file."""
    enc = {k: v for k, v in sd.items() if not k.startswith('head')}
    n_pos, dim = sd['pos_embed'].shape[1:]
    dec = {
        'mask_token': torch.zeros(1, 1, decoder_dim),
        'decoder_embed.weight': torch.randn(decoder_dim, dim), 'decoder_embed.bias': torch.zeros(decoder_dim),
        'decoder_pos_embed': torch.zeros(1, n_pos, decoder_dim),
        'decoder_blocks.0.norm1.weight': torch.ones(decoder_dim),
        'decoder_norm.weight': torch.ones(decoder_dim), 'decoder_norm.bias': torch.zeros(decoder_dim),
        'decoder_pred.weight': torch.randn(patch_dim, decoder_dim), 'decoder_pred.bias': torch.zeros(patch_dim),
    }
    return {'model': dict(enc, **dec)}


def mae_lite_official(sd: dict, with_teacher: bool = False) -> dict:
    """MAE-format weights wrapped as MAE-lite saves them: {'model': {'model.<key>': ...}} (+ teacher)."""
    inner = mae_pretrain_official(sd)['model']
    out = {'model.' + k: v for k, v in inner.items()}
    if with_teacher:  # mae_lite_distill: frozen teacher encoder and the 1x1-conv head adapter
        out.update({'tch_model.' + k: v for k, v in sd.items() if k.startswith('blocks.0.')})
        out['attn_adapter.adapter11.weight'] = torch.randn(12, 12, 1, 1)
    return {'model': out, 'start_epoch': 400}
