"""Masked autoencoder (He et al., 2022) around any vitbench backbone with the capabilities :data:`MAE_NEEDS` (the
family contract, backbones/contract.py: a ViT), in the style of facebookresearch/mae.

The encoder is a named variant (linear or hMLP stem). Patches are embedded first and masked after the stem:
the hMLP stem never mixes patches, so this equals masking the pixels. Only the visible 25% of the tokens
(plus the class token) go through the encoder, which is what makes MAE cheap. A light decoder (MAE-lite:
1 block x 96 wide x 3 heads; MAE-Base: 8 x 512 x 16) sees the encoded tokens plus a shared mask token at
the masked positions, with fixed 2-D sin-cos position embeddings, and predicts the pixels of every patch;
the loss is the MSE on the masked patches against per-patch normalised pixels (``norm_pix``).

    model = dict(type='MAE', backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224'),
                 mask_ratio=0.75, decoder=dict(embed_dim=96, depth=1, num_heads=3),
                 data_preprocessor=dict(type='ClsDataPreprocessor'))
"""
from typing import Dict, Optional, Sequence, Tuple

import torch
from mmengine.model import BaseModel
from torch import nn

from backbones.block_walk import gather_tokens
from backbones.contract import missing
from backbones.layers import Block, resample_pos_embed
from vitbench.registry import MODELS

from .classifier import build_backbone


# --------------------------------------------------------------------------------------------- functions
def sincos_pos_embed(dim: int, grid: Tuple[int, int], num_prefix: int = 0) -> torch.Tensor:
    """(1, num_prefix + H*W, dim) fixed 2-D sin-cos table as MAE's ``get_2d_sincos_pos_embed``: the first
    half of the channels encodes the column, the second half the row; prefix rows are zeros."""
    if dim % 4:
        raise ValueError(f'sin-cos position embeddings need a width divisible by 4, got {dim}')
    omega = 1. / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim // 4))
    rows, cols = torch.meshgrid(torch.arange(grid[0], dtype=torch.float64),
                                torch.arange(grid[1], dtype=torch.float64), indexing='ij')

    def embed(pos):
        out = pos.reshape(-1, 1) * omega[None]
        return torch.cat([out.sin(), out.cos()], dim=1)

    table = torch.cat([embed(cols), embed(rows)], dim=1)
    return torch.cat([torch.zeros(num_prefix, dim, dtype=torch.float64), table]).float()[None]


def random_masking(batch: int, num_tokens: int, mask_ratio: float, device=None,
                   generator: Optional[torch.Generator] = None):
    """MAE's per-sample random masking by sorting noise.

    Returns ``ids_keep`` (B, K) indices of the visible tokens with K = int(L * (1 - mask_ratio)),
    ``mask`` (B, L) with 0 = visible, 1 = masked, in the original token order, and ``ids_restore`` (B, L),
    the permutation that puts [visible tokens, mask tokens] back into the original order.

    The noise is drawn on ``device`` (a copy from the host would make a GPU wait for it at every step), except
    from a ``generator`` of another device, whose numbers are copied over. A token is masked when its place in the
    shuffled order is past the kept ones: MAE's ``gather(ones with [:keep] = 0, ids_restore)`` in one comparison.
    """
    keep = int(num_tokens * (1 - mask_ratio))
    if not 0 < keep <= num_tokens:
        raise ValueError(f'mask_ratio={mask_ratio} keeps {keep} of {num_tokens} tokens')
    device = torch.device(device or 'cpu')
    if generator is None or generator.device == device:
        noise = torch.rand(batch, num_tokens, generator=generator, device=device)
    else:
        noise = torch.rand(batch, num_tokens, generator=generator, device=generator.device).to(device)
    ids_shuffle = noise.argsort(dim=1)
    ids_restore = ids_shuffle.argsort(dim=1)
    mask = (ids_restore >= keep).float()
    return ids_shuffle[:, :keep], mask, ids_restore


def patchify(imgs: torch.Tensor, patch_size: int) -> torch.Tensor:
    """(B, C, H, W) -> (B, H/p * W/p, p * p * C), pixels of a patch in (row, column, channel) order."""
    B, C, H, W = imgs.shape
    p = patch_size
    x = imgs.reshape(B, C, H // p, p, W // p, p)
    return torch.einsum('nchpwq->nhwpqc', x).reshape(B, (H // p) * (W // p), p * p * C)


def unpatchify(x: torch.Tensor, patch_size: int, grid: Tuple[int, int], channels: int = 3) -> torch.Tensor:
    B, p = x.shape[0], patch_size
    x = x.reshape(B, grid[0], grid[1], p, p, channels)
    return torch.einsum('nhwpqc->nchpwq', x).reshape(B, channels, grid[0] * p, grid[1] * p)


def pixel_target(imgs: torch.Tensor, patch_size: int, norm_pix: bool = True, eps: float = 1e-6):
    """The regression target: patch pixels, normalised per patch (mean 0, unit variance) with ``norm_pix``."""
    target = patchify(imgs, patch_size)
    if norm_pix:
        mean, var = target.mean(dim=-1, keepdim=True), target.var(dim=-1, keepdim=True)
        target = (target - mean) / (var + eps) ** .5
    return target


# what a masked encoder needs of its backbone (the family contract's capabilities, backbones/contract.py): the
# class token the decoder reads first, the visible patches alone through the blocks, a table to fix to sin-cos
MAE_NEEDS = ('class_token', 'keep', 'pos_embed_table')


def encoder_checks(vit: nn.Module, who: str) -> None:
    """A masked encoder needs the capabilities :data:`MAE_NEEDS` and its output through the final norm."""
    lacking = missing(vit, MAE_NEEDS)
    if lacking:
        raise ValueError(f'{who}: masked image modelling needs {lacking}')
    fc_norm = getattr(vit, 'fc_norm', None)
    if fc_norm is not None and not isinstance(fc_norm, nn.Identity):  # it would stand unused, or in for the final norm
        raise ValueError(f"{who}: the encoder's output is normalised by the final norm, which fc_norm (global_pool="
                         f"{vit.global_pool!r}) replaces by a norm after pooling: pre-train with global_pool='token' "
                         "and no fc_norm (MAE-lite fine-tunes with 'avg')")


def encode_visible(vit: nn.Module, imgs: torch.Tensor, ids_keep: torch.Tensor,
                   attn_layers: Sequence[int] = (), last_block: Optional[int] = None,
                   hidden_layers: Sequence[int] = ()):
    """Run ``vit`` on the visible tokens ``ids_keep`` only, the class token first.

    Returns the normalised tokens (B, 1 + K, C) and the taps ``{'attn': {block: pre-softmax attention logits},
    'hidden': {h: hidden state}}`` for the blocks in ``attn_layers`` and the hidden states in ``hidden_layers``.
    Hidden state h (0 <= h <= depth) is MAE-lite's (official ``models_vit_distill``): the input of block h after
    that block's first norm (``norm1``; h = 0: the embedded tokens), and for h = depth the output of the final
    norm. With ``last_block``, stops after that block (and returns no tokens). One walk of
    ``backbones/block_walk.py`` (``iter_hidden`` with ``keep=ids_keep``).
    """
    depth = vit.depth
    end = depth - 1 if last_block is None else last_block  # the last block's input: the last norm1 tap
    taps = dict(attn={}, hidden={})
    for h in vit.iter_hidden(imgs, keep=ids_keep, attn_indices=attn_layers, attn_kind='logits', stop=last_block):
        if h.attn is not None:
            taps['attn'][h.index - 1] = h.attn
        if h.index in hidden_layers and h.index <= end:
            taps['hidden'][h.index] = h.normed()
    if last_block is not None:
        return None, taps
    x = h.normed()  # the last hidden state through the final norm
    if depth in hidden_layers:
        taps['hidden'][depth] = x
    return x, taps


# ---------------------------------------------------------------------------------------------- modules
class MAEDecoder(nn.Module):
    """Lightweight transformer decoder: embed, insert mask tokens, blocks, per-patch pixel prediction."""

    def __init__(self, in_dim: int, grid: Tuple[int, int], patch_dim: int, embed_dim: int = 512,
                 depth: int = 8, num_heads: int = 16, mlp_ratio: float = 4.):
        super().__init__()
        self.grid = tuple(grid)
        self.embed = nn.Linear(in_dim, embed_dim)
        self.mask_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(sincos_pos_embed(embed_dim, self.grid, num_prefix=1), requires_grad=False)
        norm = lambda dim: nn.LayerNorm(dim, eps=1e-6)  # noqa: E731
        self.blocks = nn.ModuleList([Block(embed_dim, num_heads, mlp_ratio, norm_layer=norm) for _ in range(depth)])
        self.norm = norm(embed_dim)
        self.pred = nn.Linear(embed_dim, patch_dim)

    def forward(self, x: torch.Tensor, ids_restore: torch.Tensor, grid: Tuple[int, int]) -> torch.Tensor:
        """x (B, 1 + K, in_dim) encoded visible tokens -> (B, L, patch_dim) predicted patches."""
        x = self.embed(x)
        B, L = ids_restore.shape
        tokens = torch.cat([x[:, 1:], self.mask_token.expand(B, L - x.shape[1] + 1, -1)], dim=1)
        x = torch.cat([x[:, :1], gather_tokens(tokens, ids_restore)], dim=1)
        x = x + resample_pos_embed(self.pos_embed, grid, self.grid, num_prefix_tokens=1)
        for blk in self.blocks:
            x = blk(x)
        return self.pred(self.norm(x))[:, 1:]


def mae_init_(module: nn.Module) -> None:
    """facebookresearch/mae ``initialize_weights`` for the layers: xavier-uniform linears, LayerNorms at
    (1, 0). (The tokens and the patch projection: :class:`MAE`.)"""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


@MODELS.register_module()
class MAE(BaseModel):
    """Args:
        backbone: the encoder's config (``type``, ``arch`` + overrides, optional ``init_cfg``: build_backbone).
        mask_ratio: fraction of patches hidden from the encoder (0.75).
        decoder: :class:`MAEDecoder` width / depth / heads / mlp_ratio.
        norm_pix: regress per-patch normalised pixels (MAE's better target, default).
    """
    recipe = 'mae'
    needs = MAE_NEEDS

    def __init__(self, backbone: dict, mask_ratio: float = 0.75, decoder: Optional[dict] = None,
                 norm_pix: bool = True, data_preprocessor: Optional[dict] = None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=0)
        encoder_checks(self.backbone, f'MAE encoder {self.arch!r}')
        self.mask_ratio, self.norm_pix = mask_ratio, norm_pix
        vit = self.backbone
        self.patch_size = vit.patch_size  # the family contract's: an int for square patches
        if not isinstance(self.patch_size, int):
            raise ValueError(f'MAE needs square patches, got {self.patch_size}')
        self.decoder = MAEDecoder(vit.embed_dim, vit.grid_size, self.patch_size ** 2 * 3, **(decoder or {}))
        mae_init_(self)
        proj = getattr(getattr(vit, 'patch_embed', None), 'proj', None)
        if isinstance(proj, nn.Conv2d):  # the linear stem, initialised as the linear layer it is
            nn.init.xavier_uniform_(proj.weight.view(proj.weight.shape[0], -1))
        for token in (vit.cls_token, self.decoder.mask_token):
            nn.init.normal_(token, std=.02)
        # fixed sin-cos encoder positions (MAE); the class token's row, if the variant has one, stays zero
        vit.pos_embed.data.copy_(sincos_pos_embed(vit.embed_dim, vit.grid_size, vit.pos_embed_prefix))
        vit.pos_embed.requires_grad_(False)

    def encode(self, imgs: torch.Tensor, generator: Optional[torch.Generator] = None, attn_layers=(),
               hidden_layers=()):
        """Mask, encode the visible tokens, decode. Returns pred, mask, ids_keep and the encoder's taps
        (attention logits and hidden states, :func:`encode_visible`)."""
        grid = (imgs.shape[-2] // self.patch_size, imgs.shape[-1] // self.patch_size)
        ids_keep, mask, ids_restore = random_masking(imgs.shape[0], grid[0] * grid[1], self.mask_ratio,
                                                     imgs.device, generator)
        latent, taps = encode_visible(self.backbone, imgs, ids_keep, attn_layers, hidden_layers=hidden_layers)
        return self.decoder(latent, ids_restore, grid), mask, ids_keep, taps

    def reconstruction_loss(self, imgs: torch.Tensor, pred: torch.Tensor, mask: torch.Tensor,
                            per_sample: bool = False) -> torch.Tensor:
        """MSE over the masked patches (mean per patch, then over masked patches)."""
        loss = (pred.float() - pixel_target(imgs.float(), self.patch_size, self.norm_pix)).pow(2).mean(dim=-1)
        if per_sample:
            return (loss * mask).sum(dim=1) / mask.sum(dim=1)
        return (loss * mask).sum() / mask.sum()

    def forward(self, inputs: torch.Tensor, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'predict':
            return self.predict(inputs, data_samples)
        if mode == 'tensor':
            return self.encode(inputs)[0]
        raise ValueError(f"mode must be 'loss', 'predict' or 'tensor', got {mode!r}")

    def loss(self, inputs: torch.Tensor, data_samples=None) -> Dict[str, torch.Tensor]:
        pred, mask, _, _ = self.encode(inputs)
        return dict(loss=self.reconstruction_loss(inputs, pred, mask))

    def predict(self, inputs: torch.Tensor, data_samples=None):
        """Per-image reconstruction loss under a fixed masking (seed 0 per batch): comparable across
        validations."""
        pred, mask, _, _ = self.encode(inputs, generator=torch.Generator().manual_seed(0))
        return [dict(loss=v) for v in self.reconstruction_loss(inputs, pred, mask, per_sample=True)]
