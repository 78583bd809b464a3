"""Shared helpers of the backbone tests: reference timm models and official-format state dicts.

The official formats are written here by hand from timm's key names (the naming of facebookresearch/deit's
models_v2.py / cait_models.py / resmlp_models.py and facebookresearch/mae's models_mae.py), independently of
backbones/checkpoint, so the tests check the loader against the formats rather than against itself. timm has
no PatchConvNet: ``OfficialPatchConvNet`` transcribes facebookresearch/deit's patchconvnet_models.py (its
module names are the official file's keys) as the reference for outputs and key mapping.
"""
import re
from functools import partial

import timm
import torch
from timm.models._efficientnet_blocks import SqueezeExcite
from timm.models.mlp_mixer import Affine, MlpMixer, ResBlock
from torch import nn

# vitbench variant -> (timm model, extra timm arguments) where timm has no model of that exact name
TIMM_EQUIVALENT = {
    'deit3_tiny_patch16_224': ('deit3_small_patch16_224', dict(embed_dim=192, num_heads=3)),
    'deit3_small_patch16_36': ('vit_small_patch16_36x1_224', dict(no_embed_class=True, init_values=1e-4)),
    'deit3_base_patch16_36': ('vit_small_patch16_36x1_224',
                              dict(embed_dim=768, num_heads=12, no_embed_class=True, init_values=1e-4)),
    'deit3_small_patch16_18x2': ('vit_small_patch16_18x2_224', dict(no_embed_class=True, init_values=1e-4)),
    'deit3_base_patch16_18x2': ('vit_base_patch16_18x2_224', dict(no_embed_class=True, init_values=1e-4)),
    'deit3_huge_patch14_52': ('deit3_huge_patch14_224', dict(depth=52)),
    'deit3_huge_patch14_26x2': ('vit_base_patch16_18x2_224', dict(embed_dim=1280, num_heads=16, patch_size=14, depth=26,
                                                                  no_embed_class=True, init_values=1e-4)),
    'cait_xs24_224': ('cait_xs24_384', {}),
    'cait_s36_224': ('cait_s36_384', {}),
    'cait_xs36_224': ('cait_xs24_384', dict(depth=36, init_values=1e-6)),
    'cait_s48_224': ('cait_s36_384', dict(depth=48)),
    'cait_m24_224': ('cait_m36_384', dict(depth=24, init_values=1e-5)),
    'cait_m36_224': ('cait_m36_384', {}),
    'cait_m48_224': ('cait_m48_448', {}),
    'cait_b12_224': ('cait_m36_384', dict(depth=12, init_values=0.1)),
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
            if leaf.startswith('gamma') or leaf in ('ls1', 'ls2'):  # LayerScale (timm's ResMLP: bare ls1 / ls2)
                v = torch.rand(p.shape, generator=g) * 0.5 + 0.1
            elif (leaf in ('running_var', 'weight') and p.dim() == 1) or leaf == 'alpha':  # norms, Affine scales
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


# ---- ResMLP: timm's model at any size, and the official format ----
def timm_resmlp(embed_dim: int = 384, depth: int = 2, patch_size: int = 16, img_size: int = 64,
                num_classes: int = 1000) -> torch.nn.Module:
    """timm's ResMLP (mlp_mixer.MlpMixer with ResBlock / Affine, as its resmlp_* entries build it) at any size
    (those entries fix the shape), randomized, in eval mode."""
    model = materialize(MlpMixer, num_classes=num_classes, img_size=img_size, patch_size=patch_size,
                        num_blocks=depth, embed_dim=embed_dim, mlp_ratio=4, block_layer=partial(ResBlock),
                        norm_layer=Affine)
    return randomize(model).eval()


def resmlp_official(sd: dict) -> dict:
    """timm ResMLP state dict -> facebookresearch/deit resmlp_models.py file: a bare state dict (the inverse of
    timm's checkpoint_filter_fn: patch_embed, attn, mlp, gamma_1 / gamma_2, (C,) Affine parameters)."""
    out = {}
    for k, v in sd.items():
        k = k.replace('stem.', 'patch_embed.').replace('linear_tokens.', 'attn.').replace('mlp_channels.', 'mlp.')
        k = re.sub(r'\.ls([12])$', r'.gamma_\1', k)
        out[k] = v.reshape(-1) if k.endswith(('.alpha', '.beta')) else v
    return out


# ---- PatchConvNet: the official model, transcribed ----
class _OfficialConvBlocksSE(nn.Module):
    """``Conv_blocks_se``: tokens -> square map -> 1x1, GELU, dw 3x3, GELU, SqueezeExcite, 1x1 -> tokens."""

    def __init__(self, dim):
        super().__init__()
        self.qkv_pos = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=1), nn.GELU(),
            nn.Conv2d(dim, dim, groups=dim, kernel_size=3, padding=1, stride=1, bias=True), nn.GELU(),
            SqueezeExcite(dim, rd_ratio=0.25), nn.Conv2d(dim, dim, kernel_size=1))

    def forward(self, x):
        B, N, C = x.shape
        H = W = int(N ** 0.5)
        x = self.qkv_pos(x.transpose(-1, -2).reshape(B, C, H, W))
        return x.reshape(B, C, N).transpose(-1, -2)


class _OfficialBlock(nn.Module):
    """``Layer_scale_init_Block``: x + gamma_1 * attn(norm1(x))."""

    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = _OfficialConvBlocksSE(dim)
        self.gamma_1 = nn.Parameter(1e-4 * torch.ones(dim))

    def forward(self, x):
        return x + self.gamma_1 * self.attn(self.norm1(x))


class _OfficialAggregation(nn.Module):
    """``Learned_Aggregation_Layer``: the class token (first token) queries all tokens, one head."""

    def __init__(self, dim, num_heads=1):
        super().__init__()
        self.num_heads, self.scale = num_heads, (dim // num_heads) ** -0.5
        self.q, self.k, self.v = (nn.Linear(dim, dim, bias=True) for _ in range(3))
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        h = self.num_heads
        q = self.q(x[:, 0]).unsqueeze(1).reshape(B, 1, h, C // h).permute(0, 2, 1, 3) * self.scale
        k = self.k(x).reshape(B, N, h, C // h).permute(0, 2, 1, 3)
        v = self.v(x).reshape(B, N, h, C // h).permute(0, 2, 1, 3)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, 1, C))


class _OfficialTokenBlock(nn.Module):
    """``Layer_scale_init_Block_only_token`` with the aggregation layer and an FFN of ratio 3."""

    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = _OfficialAggregation(dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.mlp = timm.layers.Mlp(dim, int(dim * 3.0))
        self.gamma_1 = nn.Parameter(1e-4 * torch.ones(dim))
        self.gamma_2 = nn.Parameter(1e-4 * torch.ones(dim))

    def forward(self, x, x_cls):
        x_cls = x_cls + self.gamma_1 * self.attn(self.norm1(torch.cat((x_cls, x), dim=1)))
        return x_cls + self.gamma_2 * self.mlp(self.norm2(x_cls))


class _OfficialStem(nn.Module):
    """``ConvStem``: four conv3x3 (each an nn.Sequential of one bias-free conv) of stride 2, GELU between."""

    def __init__(self, dim):
        super().__init__()
        widths = [3, dim // 8, dim // 4, dim // 2, dim]
        layers = []
        for i in range(4):
            layers += [nn.Sequential(nn.Conv2d(widths[i], widths[i + 1], 3, stride=2, padding=1, bias=False))]
            layers += [nn.GELU()] if i < 3 else []
        self.proj = nn.Sequential(*layers)

    def forward(self, x):
        return self.proj(x).flatten(2).transpose(1, 2)


class OfficialPatchConvNet(nn.Module):
    """``PatchConvnet`` (single class token, LayerNorm, one aggregation block) with the official keys."""

    def __init__(self, embed_dim=384, depth=60, num_classes=1000):
        super().__init__()
        self.patch_embed = _OfficialStem(embed_dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.blocks = nn.ModuleList([_OfficialBlock(embed_dim) for _ in range(depth)])
        self.blocks_token_only = nn.ModuleList([_OfficialTokenBlock(embed_dim)])
        self.norm = nn.LayerNorm(embed_dim, eps=1e-6)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x)
        cls_tokens = self.cls_token.expand(x.shape[0], -1, -1)
        for blk in self.blocks:
            x = blk(x)
        for blk in self.blocks_token_only:
            cls_tokens = blk(x, cls_tokens)
        return self.head(self.norm(torch.cat((cls_tokens, x), dim=1))[:, 0])


def official_patchconvnet(embed_dim=384, depth=2, num_classes=1000) -> nn.Module:
    """The transcribed official PatchConvNet, randomized, in eval mode."""
    return randomize(OfficialPatchConvNet(embed_dim, depth, num_classes)).eval()
