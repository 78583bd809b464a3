"""Pre-norm transformer blocks: sequential, parallel (k branches) and CaiT's class-attention block.

Key names follow timm (``norm1``, ``attn``, ``ls1``, ``norm2``, ``mlp``, ``ls2``; parallel blocks
``attns.i.{norm,attn,ls}`` and ``ffns.i.{norm,mlp,ls}``), so timm state dicts load as they are; the official
DeiT III / CaiT / three-things names are mapped by ``backbones.checkpoint``.
"""
from typing import Optional, Sequence, Tuple

import torch
from timm.layers import DropPath
from torch import nn

from .attention import Attention
from .cait_attention import ClassAttention
from .mlp import LayerScale, Mlp
from .parallel_fused import (FusedWeights, can_fuse_attention, cpu_chunk_images, fused_attention, fused_mlp,
                             shared_norm_eps, stack_input_layers, stack_output_layers)
from .window import window_attention


def residual(x: torch.Tensor, y: torch.Tensor, ls: Optional[LayerScale], drop_path: Optional[DropPath]):
    """``x + drop_path(ls(y))``; absent LayerScale / drop path cost nothing (no Identity modules)."""
    if ls is not None:
        y = ls(y)
    if drop_path is not None:
        y = drop_path(y)
    return x + y


def self_attention(attn: nn.Module, x: torch.Tensor, grid: Optional[Tuple[int, int]], window_size: int,
                   num_prefix_tokens: int, return_attn: Optional[str], num_queries: Optional[int]):
    """Global or windowed self-attention of ``attn`` over normalised tokens ``x`` (see ``Block.forward``)."""
    if not window_size or (num_queries is not None and num_queries <= num_prefix_tokens):
        # prefix tokens attend globally in windowed blocks too
        # (only relative position biases need to know where the patch tokens are)
        where = dict(grid=grid, num_prefix_tokens=num_prefix_tokens) if attn.use_rel_pos else {}
        return attn(x, return_attn=return_attn, num_queries=num_queries, **where)
    if return_attn is not None or num_queries is not None:
        raise NotImplementedError('attention maps and query subsets need a global-attention block')
    if grid is None:
        raise ValueError('a windowed-attention block needs the token grid: call it as blk(x, grid=(H, W))')
    return window_attention(attn, x, grid, window_size, num_prefix_tokens)


def _rel_pos_kwargs(rel_pos_size, rel_pos_kind: str = 'decomposed') -> dict:
    # only passed when set: the other attention layers (CaiT's talking heads) have no such argument
    return {} if rel_pos_size is None else dict(rel_pos_size=rel_pos_size, rel_pos_kind=rel_pos_kind)


def _make_ls(dim, init_values):
    """The branch's scale: LayerScale at ``init_values``, none for None, or what a scheme makes (a callable
    ``dim -> module or None``, backbones/layers/residual_scale.py)."""
    if callable(init_values):
        return init_values(dim)
    return LayerScale(dim, init_values) if init_values is not None else None


def make_drop_path(rate):
    return DropPath(rate) if rate > 0. else None


class Block(nn.Module):
    """x = x + attn(norm1(x)); x = x + mlp(norm2(x)) with optional LayerScale, stochastic depth and windows.

    ``window_size > 0`` restricts the patch tokens' attention to windows (ViTDet); the forward pass then
    needs the token ``grid``. ``rel_pos_size=(H, W)`` adds relative position biases over that attention grid
    (the window for a windowed block, the token grid of the input size for a global one; see
    :class:`~.attention.Attention`); the forward pass then needs the ``grid`` too.
    """

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4., qkv_bias: bool = True,
                 init_values: Optional[float] = None, drop_path: float = 0., attn_drop: float = 0.,
                 proj_drop: float = 0., norm_layer=nn.LayerNorm, act_layer=nn.GELU, attn_layer=Attention,
                 window_size: int = 0, num_prefix_tokens: int = 0,
                 rel_pos_size: Optional[Tuple[int, int]] = None, rel_pos_kind: str = 'decomposed'):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, num_heads=num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop,
                               proj_drop=proj_drop, **_rel_pos_kwargs(rel_pos_size, rel_pos_kind))
        self.ls1 = _make_ls(dim, init_values)
        self.drop_path1 = make_drop_path(drop_path)
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer, drop=proj_drop)
        self.ls2 = _make_ls(dim, init_values)
        self.drop_path2 = make_drop_path(drop_path)
        self.window_size = window_size
        self.num_prefix_tokens = num_prefix_tokens
        # the first held_prefix tokens pass through unchanged and unseen: a class token inserted later (CaiT
        # Table 2); the block then attends over the rest alone (its num_prefix_tokens counts none of them)
        self.held_prefix = 0

    def forward(self, x: torch.Tensor, grid: Optional[Tuple[int, int]] = None,
                return_attn: Optional[str] = None, num_queries: Optional[int] = None):
        """Returns x, or (x, attention logits/probs of shape (B, heads, N, N)) when ``return_attn`` is set.

        ``num_queries=n`` updates only the first n tokens (returns (B, n, C)): a classifier reading the class
        token needs nothing else from the last block, whose MLP and attention queries then skip the patches.
        With ``held_prefix`` = p, the first p tokens are held out: the maps are those of the other N - p.
        """
        if self.held_prefix:
            if num_queries is not None:
                raise ValueError('a block that holds the prefix tokens out updates none of them (num_queries)')
            held, x = x[:, :self.held_prefix], x[:, self.held_prefix:]
            out = self._forward(x, grid, return_attn, None)
            if return_attn is None:
                return torch.cat([held, out], dim=1)
            return torch.cat([held, out[0]], dim=1), out[1]
        return self._forward(x, grid, return_attn, num_queries)

    def _forward(self, x, grid, return_attn, num_queries):
        y = self_attention(self.attn, self.norm1(x), grid, self.window_size, self.num_prefix_tokens,
                           return_attn, num_queries)
        if return_attn is not None:
            y, attn = y
        x = residual(x if num_queries is None else x[:, :num_queries], y, self.ls1, self.drop_path1)
        x = residual(x, self.mlp(self.norm2(x)), self.ls2, self.drop_path2)
        return x if return_attn is None else (x, attn)


class Branch(nn.Module):
    """One residual branch of a parallel block: its own pre-norm, layer (``attn`` or ``mlp``) and LayerScale."""

    def __init__(self, name: str, layer: nn.Module, dim: int, norm_layer, init_values, drop_path):
        super().__init__()
        self.norm = norm_layer(dim)
        self.add_module(name, layer)
        self.ls = _make_ls(dim, init_values)
        self.drop_path = make_drop_path(drop_path)


class ParallelBlock(nn.Module):
    """Parallel ViT block (Touvron et al., 2022, Eq. 2), ``num_parallel`` branches k:

        x = x + sum_i attn_i(norm_i(x));  x = x + sum_i mlp_i(norm'_i(x))

    k branches per layer have the parameters and FLOPs of k sequential blocks in 1/k of the depth; each branch
    has its own pre-norm and LayerScale, as in the official ``Layer_scale_init_Block_paralx2``.

    ``fused=True`` (the default) runs the k branches as one wider operation (``parallel_fused.py``: one qkv
    product, one attention call over all branches' heads, one output projection; one fc1, one fc2): the same
    function of the same parameters, to float rounding. The branches run one after the other (``fused=False``,
    the paper's "seq" column of Table 4) where the stacked form does not apply: attention maps asked for,
    windows or relative positions, norms other than one LayerNorm eps, and a training step with stochastic
    depth or dropout (each branch draws its own mask, as in the official code).
    """

    def __init__(self, dim: int, num_heads: int, num_parallel: int = 2, mlp_ratio: float = 4.,
                 qkv_bias: bool = True, init_values: Optional[float] = None, drop_path: float = 0.,
                 attn_drop: float = 0., proj_drop: float = 0., norm_layer=nn.LayerNorm, act_layer=nn.GELU,
                 attn_layer=Attention, window_size: int = 0, num_prefix_tokens: int = 0,
                 rel_pos_size: Optional[Tuple[int, int]] = None, rel_pos_kind: str = 'decomposed',
                 fused: bool = True):
        super().__init__()
        self.num_parallel = num_parallel
        self.fused = fused
        self.drop_rates = (drop_path, attn_drop, proj_drop)
        self.attns = nn.ModuleList([
            Branch('attn', attn_layer(dim, num_heads=num_heads, qkv_bias=qkv_bias, attn_drop=attn_drop,
                                      proj_drop=proj_drop, **_rel_pos_kwargs(rel_pos_size, rel_pos_kind)),
                   dim, norm_layer, init_values, drop_path)
            for _ in range(num_parallel)])
        self.ffns = nn.ModuleList([
            Branch('mlp', Mlp(dim, int(dim * mlp_ratio), act_layer=act_layer, drop=proj_drop),
                   dim, norm_layer, init_values, drop_path)
            for _ in range(num_parallel)])
        self.window_size = window_size
        self.num_prefix_tokens = num_prefix_tokens
        self._attn_weights, self._mlp_weights = FusedWeights(), FusedWeights()

    def runs_fused(self, return_attn: Optional[str] = None) -> bool:
        """Whether this call computes the branches as one wider operation (see the class docstring)."""
        if not self.fused or return_attn is not None or self.window_size:
            return False
        if self.training and any(self.drop_rates):
            return False
        dim = self.attns[0].norm.normalized_shape[-1] if hasattr(self.attns[0].norm, 'normalized_shape') else None
        return (can_fuse_attention([b.attn for b in self.attns])
                and shared_norm_eps([b.norm for b in self.attns], dim) is not None
                and shared_norm_eps([b.norm for b in self.ffns], dim) is not None)

    def _stacked_attention(self):
        def build():
            qkv = stack_input_layers([b.norm for b in self.attns], [b.attn.qkv for b in self.attns], groups=3)
            proj = stack_output_layers([b.attn.proj for b in self.attns], [b.ls for b in self.attns])
            return qkv + proj
        return self._attn_weights.get([p for b in self.attns for p in b.parameters()], build)

    def _stacked_mlp(self):
        def build():
            fc1 = stack_input_layers([b.norm for b in self.ffns], [b.mlp.fc1 for b in self.ffns])
            fc2 = stack_output_layers([b.mlp.fc2 for b in self.ffns], [b.ls for b in self.ffns])
            return fc1 + fc2
        return self._mlp_weights.get([p for b in self.ffns for p in b.parameters()], build)

    def forward_fused(self, x: torch.Tensor, num_queries: Optional[int] = None) -> torch.Tensor:
        """The branches as one wider operation (``parallel_fused.py``); only where :meth:`runs_fused`."""
        attn = self.attns[0]
        y = fused_attention(x, attn.norm.eps, *self._stacked_attention(), self.num_parallel, attn.attn.num_heads,
                            num_queries)
        x = (x if num_queries is None else x[:, :num_queries]) + y
        ffn = self.ffns[0]
        return x + fused_mlp(x, ffn.norm.eps, *self._stacked_mlp(), ffn.mlp.act)

    def forward(self, x: torch.Tensor, grid: Optional[Tuple[int, int]] = None,
                return_attn: Optional[str] = None, num_queries: Optional[int] = None):
        """Returns x, or (x, maps of all branches concatenated along the heads, (B, k*heads, N, N)).
        ``num_queries`` as in :meth:`Block.forward`."""
        if self.runs_fused(return_attn):
            step = cpu_chunk_images(x)
            if step:  # CPU inference: a few images at a time, exactly the same function (attention is per image)
                return torch.cat([self.forward_fused(x[i:i + step], num_queries)
                                  for i in range(0, x.shape[0], step)])
            return self.forward_fused(x, num_queries)
        return self.forward_sequential(x, grid, return_attn, num_queries)

    def forward_sequential(self, x: torch.Tensor, grid: Optional[Tuple[int, int]] = None,
                           return_attn: Optional[str] = None, num_queries: Optional[int] = None):
        """The branches one after the other (the paper's "seq"); arguments as :meth:`forward`."""
        ys = [self_attention(b.attn, b.norm(x), grid, self.window_size, self.num_prefix_tokens, return_attn,
                             num_queries) for b in self.attns]
        if return_attn is not None:
            ys, maps = zip(*ys)
        if num_queries is not None:
            x = x[:, :num_queries]
        # every branch reads the same input, so all outputs are computed before any is added
        for b, y in zip(self.attns, ys):
            x = residual(x, y, b.ls, b.drop_path)
        ys = [b.mlp(b.norm(x)) for b in self.ffns]
        for b, y in zip(self.ffns, ys):
            x = residual(x, y, b.ls, b.drop_path)
        return x if return_attn is None else (x, torch.cat(maps, dim=1))


class ClassAttentionBlock(Block):
    """CaiT class-attention block: updates only the class token, reading [class token, patch tokens].

    The layers (and key names) of :class:`Block` with :class:`ClassAttention`, no windows; only the forward
    differs.
    """

    def __init__(self, dim: int, num_heads: int, mlp_ratio: float = 4., qkv_bias: bool = True,
                 init_values: Optional[float] = 1e-5, drop_path: float = 0., attn_drop: float = 0.,
                 proj_drop: float = 0., norm_layer=nn.LayerNorm, act_layer=nn.GELU, queries_in_keys: bool = True):
        super().__init__(dim, num_heads, mlp_ratio, qkv_bias, init_values, drop_path, attn_drop, proj_drop,
                         norm_layer, act_layer, attn_layer=ClassAttention)
        self.queries_in_keys = queries_in_keys  # False: the class tokens attend over the patches only

    def forward(self, x: torch.Tensor, cls_token: torch.Tensor, return_attn: Optional[str] = None):
        """x: (B, N, C) patch tokens, cls_token: (B, 1, C) (or (B, n, C): a class and a distillation token, each
        querying all of them and the patches; or one token per class, querying the patches alone); returns the
        updated token(s)."""
        y = self.attn(self.norm1(torch.cat([cls_token, x], dim=1)), return_attn=return_attn,
                      num_queries=cls_token.shape[1], queries_in_keys=self.queries_in_keys)
        if return_attn is not None:
            y, attn = y
        cls_token = residual(cls_token, y, self.ls1, self.drop_path1)
        cls_token = residual(cls_token, self.mlp(self.norm2(cls_token)), self.ls2, self.drop_path2)
        return cls_token if return_attn is None else (cls_token, attn)


def drop_path_rates(rate: float, depth: int, uniform: bool = False) -> Sequence[float]:
    """Per-block stochastic depth: linearly increasing to ``rate`` (DeiT, timm) or constant (DeiT III, CaiT)."""
    if uniform:
        return [rate] * depth
    return [rate * i / max(depth - 1, 1) for i in range(depth)]
