"""How a residual branch is weighted at the sum, ``x + s * f(norm(x))``: the schemes CaiT compares for training deep
ViTs (Touvron et al., "Going deeper with Image Transformers", §2 and Table 1; thesis §3.5, Tables 3.11, 3.12).

* ``none``: no ``s`` (ViT / DeiT);
* ``layerscale``: ``s`` per channel, shape (C,), every value ε (CaiT Eq. 4); ``layer_scale_init`` 'zero' (λ = 0)
  or 'uniform' (λ ~ U[0, 2ε]) are thesis Table 3.12's other columns;
* ``rezero``: one scalar α = 0 (Bachlechner et al., 2020);
* ``scalar``: one scalar α = ε (CaiT Table 1, column "α = ε");
* ``fixup``: one scalar α = 1 and the init of :func:`fixup_init` (Zhang et al., 2019);
* ``t_fixup``: one scalar α = 1 and the init of :func:`t_fixup_init` (Huang et al., 2020).

One ``s`` per residual branch (CaiT Eq. 3: α_l for the attention, α'_l for the FFN of block l). As CaiT ran them
(its Figure 3 (c), "adapted"), ReZero, Fixup and T-Fixup keep the pre-norm ``η`` and the warm-up that their papers
remove: without them CaiT reports they do not converge. ε by depth (CaiT §2, :func:`layer_scale_eps`): 0.1 up
to 18 blocks, 1e-5 at 24, 1e-6 beyond. ``trainable=False`` freezes ``s`` (thesis §3.5.3 "re-trained with fixed
weights": the values of an earlier LayerScale training, ``residual_scale_from`` of the ViT; its value
:data:`SCALES_FROM_CHECKPOINT` takes them from the run's ``--checkpoint``, which then loads nothing else).
"""
from dataclasses import dataclass
from typing import Optional, Union

import torch
from torch import nn

from .mlp import LayerScale

SCHEMES = ('none', 'layerscale', 'rezero', 'scalar', 'fixup', 't_fixup')
LAYER_SCALE_INITS = ('const', 'zero', 'uniform')
BY_DEPTH = 'by_depth'
# residual_scale_from's value that names the run's --checkpoint (tools/train.py; the map's ``needs``): the scales of
# that file and nothing else of it, so that the experiment's options name no machine's path
SCALES_FROM_CHECKPOINT = 'checkpoint'


def layer_scale_eps(depth: int) -> float:
    """CaiT's LayerScale init ε for ``depth`` blocks (§2): 0.1 up to depth 18, 1e-5 up to 24, 1e-6 deeper."""
    return 0.1 if depth <= 18 else 1e-5 if depth <= 24 else 1e-6


@dataclass(frozen=True)
class ResidualScale:
    """The scheme of every branch of a model: ``scale(dim)`` makes the module of one branch (None: no ``s``)."""
    scheme: str = 'none'
    eps: Optional[float] = None  # ε of 'layerscale' and 'scalar'
    layer_scale_init: str = 'const'
    trainable: bool = True

    def __post_init__(self):
        if self.scheme not in SCHEMES:
            raise ValueError(f'residual_scale={self.scheme!r}: expected one of {SCHEMES}')
        if self.layer_scale_init not in LAYER_SCALE_INITS:
            raise ValueError(f'layer_scale_init={self.layer_scale_init!r}: expected one of {LAYER_SCALE_INITS}')
        if self.scheme in ('layerscale', 'scalar') and self.eps is None:
            raise ValueError(f"residual_scale={self.scheme!r} needs init_values (ε: a float, or {BY_DEPTH!r} "
                             f"for CaiT's rule by depth)")
        if self.layer_scale_init != 'const' and self.scheme != 'layerscale':
            raise ValueError(f"layer_scale_init={self.layer_scale_init!r} is an init of residual_scale='layerscale', "
                             f"not of {self.scheme!r}")

    @property
    def initial(self) -> Optional[float]:
        """The value ``s`` starts at (the mean of the uniform init); None without ``s``."""
        return {'none': None, 'rezero': 0., 'fixup': 1., 't_fixup': 1.}.get(self.scheme, self.eps)

    def __call__(self, dim: int) -> Optional[LayerScale]:
        if self.scheme == 'none':
            return None
        per_channel = self.scheme == 'layerscale'
        module = LayerScale(dim if per_channel else 1, self.initial)
        with torch.no_grad():
            if self.layer_scale_init == 'zero':
                module.gamma.zero_()
            elif self.layer_scale_init == 'uniform':  # same mean contribution as ε, a value per channel
                module.gamma.uniform_(0., 2 * self.eps)
        module.gamma.requires_grad_(self.trainable)
        return module


def residual_scale(scheme: Optional[str], init_values: Union[float, str, None], depth: int,
                   layer_scale_init: str = 'const', trainable: bool = True) -> ResidualScale:
    """The scheme a ViT's arguments select: ``scheme`` None is LayerScale where ``init_values`` is set (DeiT III's
    argument), none otherwise; ``init_values='by_depth'`` is :func:`layer_scale_eps` of ``depth``."""
    eps = layer_scale_eps(depth) if init_values == BY_DEPTH else init_values
    if isinstance(eps, str):
        raise ValueError(f'init_values={init_values!r}: expected a float, None or {BY_DEPTH!r}')
    if scheme is None:
        scheme = 'none' if eps is None else 'layerscale'
    return ResidualScale(scheme, None if eps is None else float(eps), layer_scale_init, trainable)


def _branches(block: nn.Module):
    """(attention branch layers, MLP) of a sequential block (``attn.qkv``/``attn.proj``, ``mlp.fc1``/``mlp.fc2``)."""
    return block.attn, block.mlp


def _value_rows(attn: nn.Module) -> slice:
    dim = attn.proj.in_features
    return slice(2 * dim, 3 * dim)  # qkv's output is [q; k; v]


@torch.no_grad()
def fixup_init(blocks, head: Optional[nn.Module] = None) -> float:
    """Fixup (Zhang et al., ICLR 2019, §3 "rule"), with L residual branches of m layers:

        the last layer of every branch = 0; the other layers of a branch x L^(-1/(2m-2)); the classifier = 0;
        a scalar multiplier at 1 on every branch (the scheme's ``s``).

    In a ViT, L = 2 * depth (attention and MLP of every block) and m = 2 along the residual path (the value then
    the output projection, ``fc1`` then ``fc2``), so L^(-1/(2m-2)) = (2 depth)^(-1/2): the value rows of ``qkv``
    and ``fc1`` are scaled (after the family's own init, its "standard method"), ``proj`` and ``fc2`` zeroed
    (weights and biases). The queries and keys only weight the values, as in T-Fixup, which scales v and not q,
    k. Fixup's scalar biases before each layer are not added: the Linear layers' biases already hold them in
    function. Returns the scale applied."""
    blocks = list(blocks)
    scale = (2 * len(blocks)) ** -0.5
    for blk in blocks:
        attn, mlp = _branches(blk)
        attn.qkv.weight[_value_rows(attn)] *= scale
        mlp.fc1.weight *= scale
        for last in (attn.proj, mlp.fc2):
            nn.init.zeros_(last.weight)
            if last.bias is not None:
                nn.init.zeros_(last.bias)
    if isinstance(head, nn.Linear):
        nn.init.zeros_(head.weight)
        nn.init.zeros_(head.bias)
    return scale


@torch.no_grad()
def t_fixup_init(blocks, head: Optional[nn.Module] = None) -> float:
    """T-Fixup (Huang et al., ICML 2020, §3.2, encoder of N layers):

        Xavier-uniform for every weight matrix (q, k and v each as a d x d matrix), biases 0; then the value
        ``v`` and output ``w`` projections of every attention and the two weight matrices of every MLP
        x 0.67 N^(-1/4).

    N = depth. The patch projection, position embeddings and class token keep the family's init: the
    embedding rule of T-Fixup (N(0, d^-1/2) for a token lookup table, scaled with a decoder) has no counterpart
    in ViT's input, and CaiT's adapted T-Fixup keeps the pre-norm that makes the input scale irrelevant to the
    first block. ``s`` is a scalar at 1 (CaiT Figure 3 (c)). Returns the scale applied."""
    blocks = list(blocks)
    scale = 0.67 * len(blocks) ** -0.25
    for blk in blocks:
        attn, mlp = _branches(blk)
        dim = attn.proj.in_features
        for i in range(3):
            nn.init.xavier_uniform_(attn.qkv.weight[i * dim:(i + 1) * dim])
        for layer in (attn.qkv, attn.proj, mlp.fc1, mlp.fc2):
            if layer is not attn.qkv:
                nn.init.xavier_uniform_(layer.weight)
            if layer.bias is not None:
                nn.init.zeros_(layer.bias)
        attn.qkv.weight[_value_rows(attn)] *= scale
        for layer in (attn.proj, mlp.fc1, mlp.fc2):
            layer.weight *= scale
    if isinstance(head, nn.Linear):
        nn.init.xavier_uniform_(head.weight)
        nn.init.zeros_(head.bias)
    return scale


def apply_scheme_init(scheme: ResidualScale, blocks, head: Optional[nn.Module] = None) -> None:
    """The weight init of ``scheme`` (Fixup, T-Fixup) on ``blocks``; the other schemes keep the family's."""
    if scheme.scheme == 'fixup':
        fixup_init(blocks, head)
    elif scheme.scheme == 't_fixup':
        t_fixup_init(blocks, head)


def check_scheme_blocks(scheme: ResidualScale, blocks) -> None:
    """Fixup / T-Fixup initialise the ``qkv``, ``proj``, ``fc1``, ``fc2`` of sequential blocks."""
    if scheme.scheme in ('fixup', 't_fixup'):
        for blk in blocks:
            if not all(hasattr(blk, a) for a in ('attn', 'mlp')) or not hasattr(blk.attn, 'qkv'):
                raise ValueError(f"residual_scale={scheme.scheme!r} initialises sequential blocks (attn.qkv, "
                                 f"attn.proj, mlp.fc1, mlp.fc2); {type(blk).__name__} is not one "
                                 "(num_parallel=1)")
