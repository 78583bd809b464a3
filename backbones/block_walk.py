"""The one way through a backbone's blocks: every caller that needs more than a model's output (dense maps,
attention maps, MAE's visible-token encoder and its distillation taps, the representation analyses) reads the
hidden states of :meth:`BlockWalkMixin.iter_hidden`, never the blocks themselves.
"""
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


def normalize_indices(indices: Union[int, Sequence[int]], depth: int) -> List[int]:
    """Block indices (negative ones count from the end) as sorted non-negative ints, checked against depth."""
    indices = [indices] if isinstance(indices, int) else list(indices)
    out = []
    for i in indices:
        if not -depth <= i < depth:
            raise ValueError(f'out index {i} is out of range for a model with {depth} blocks')
        out.append(i % depth)
    return sorted(set(out))


def take_indices(indices: Union[int, Sequence[int], None], depth: int) -> Tuple[List[int], int]:
    """timm's ``feature_take_indices`` (timm/models/_features.py): (the blocks to take, the last of them).
    None: every block; an int n: the last n blocks; a sequence: those blocks (negative ones from the end)."""
    if indices is None:
        indices = depth
    if isinstance(indices, int):
        if not 0 < indices <= depth:
            raise ValueError(f'indices={indices}: an int takes the last n blocks, n from 1 to {depth}')
        take = list(range(depth - indices, depth))
    else:
        take = [normalize_indices(i, depth)[0] for i in indices]
        if not take:
            raise ValueError(f'indices={indices!r}: expected at least one block index (0 to {depth - 1})')
    return take, max(take)


def tokens_to_map(tokens: torch.Tensor, num_prefix_tokens: int, grid: Tuple[int, int]) -> torch.Tensor:
    """(B, prefix + N, C) tokens -> their patches as a (B, C, H/p, W/p) map (a view where it can be)."""
    y = tokens[:, num_prefix_tokens:]
    return y.transpose(1, 2).reshape(y.shape[0], -1, *grid)


def gather_tokens(x: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """x (B, L, C), ids (B, K) -> (B, K, C)."""
    return x.gather(1, ids[..., None].expand(-1, -1, x.shape[-1]))


@dataclass
class Hidden:
    """Hidden state ``index`` of a walk: the input of block ``index``; ``index == depth``: the last block's
    output. (Hidden state 0 is the embedded tokens: patches, prefix tokens and position embeddings.)"""
    index: int
    tokens: torch.Tensor  # (B, prefix + N, C): the prefix tokens first, then the patches (the kept ones)
    grid: Tuple[int, int]  # the input's patch grid (H/p, W/p)
    num_prefix_tokens: int
    # how the next layer normalises these tokens: block ``index``'s norm1, the final norm after the last block;
    # None where there is no single one (parallel blocks: a norm per branch; PatchConvNet's 2-D norms)
    norm: Optional[nn.Module]
    attn: Optional[torch.Tensor] = None  # (B, heads, prefix + N, prefix + N) of the block before, where asked
    state: Optional[torch.Tensor] = None  # what the blocks pass on where not ``tokens`` (PatchConvNet's map)

    def patches(self) -> torch.Tensor:
        """The patch tokens (B, N, C), prefix tokens stripped."""
        return self.tokens[:, self.num_prefix_tokens:]

    def normed(self) -> torch.Tensor:
        """The tokens (prefix included) as the next layer normalises them (MAE-lite's hidden states)."""
        if self.norm is None:
            raise ValueError(f'hidden state {self.index} is the norm1 output of block {self.index}, and that block '
                             'has no single norm1 of tokens (parallel blocks have one norm per branch, PatchConvNet '
                             'normalises maps)')
        return self.norm(self.tokens)

    def map(self, tokens: Optional[torch.Tensor] = None) -> torch.Tensor:
        """The patch tokens of ``tokens`` (default: these) as a (B, C, H/p, W/p) map; needs every patch."""
        return tokens_to_map(self.tokens if tokens is None else tokens, self.num_prefix_tokens, self.grid)


class BlockWalkMixin:
    """The walk of the patch-based models (ViT, CaiT's trunk, ResMLP, PatchConvNet's trunk).

    ``iter_hidden(x, keep=None, attn_indices=(), attn_kind='probs', stop=None)`` runs the trunk once and yields
    :class:`Hidden` 0 .. depth (the embedded tokens, then the output of each block), from which a caller takes
    what it needs:

    * ``tokens`` (prefix tokens kept) or ``patches()`` (stripped); ``map()``: a (B, C, H/p, W/p) map;
    * ``normed()``: the tokens as the next layer normalises them, block h's ``norm1`` (MAE-lite's hidden
      states, the analyses' CKA representations), the final norm after the last block (``norm``; ``fc_norm``
      where a ViT normalises after average pooling instead);
    * ``attn``: the attention map ('probs' or 'logits', ``attn_kind``) of the block before, for the blocks in
      ``attn_indices`` only (the others keep the fused kernel); needs ``block_attention``;
    * ``keep`` (B, K): only these patches go through the blocks, gathered after the position embedding, the
      prefix tokens first (MAE's visible tokens); needs ``supports_keep`` (global attention);
    * ``stop``: the last block to run (the walk yields hidden states 0 .. stop + 1);
    * ``masked`` (B, N) bool with ``mask_token`` (1, 1, C): those patches' stem outputs are replaced by the token
      before the position embedding (BEiT's masked image modelling); needs the capability ``token_mask``.

        for h in vit.iter_hidden(imgs, keep=ids_keep, attn_indices=[-1], attn_kind='logits'):
            ...  # h.index, h.normed(), h.attn

    ``forward_intermediates`` (timm's, with its arguments and meaning: what the dense wrappers and
    ``TimmBackbone`` both read) and ``forward_attention(x, indices, kind)`` read it; so do MAE and distilled MAE
    (``pretrain/mae.py``) and the analyses (``downstream/analysis/features.py``). No caller outside
    ``backbones/`` touches ``.blocks`` (``tests/test_block_walk.py``).

    The model provides ``blocks`` (called as ``blk(x, grid=grid)``, with ``return_attn=kind`` for a map), the
    final ``norm``, ``_trunk_input(x, keep) -> (state, grid)`` (the first block's input; ``keep`` is only
    given where ``supports_keep``), ``_tokens(state)`` where that state is not already (B, prefix + N, C)
    tokens (PatchConvNet's maps), ``num_prefix_tokens``, and ``_final_features(tokens)`` where its features
    are not the final ``norm`` of the last block's tokens (CaiT's class attention).
    """
    num_prefix_tokens: int  # no default: every family states it (backbones/contract.py)
    block_attention: bool = False  # whether the blocks return attention maps
    supports_keep: bool = False  # whether the blocks can run on a subset of the patches
    # activation checkpointing of the blocks in the walk (the dense backbones' ``with_cp``)
    with_cp: bool = False

    def run_block(self, blk: nn.Module, x: torch.Tensor, **kwargs):
        """``blk(x, **kwargs)``; with ``with_cp``, in training, under activation checkpointing: the block's
        activations are recomputed in the backward instead of kept (detectron2's ``use_act_checkpoint``),
        the RNG state is restored so that drop path and dropout draw the same masks again."""
        if self.with_cp and self.training and torch.is_grad_enabled():
            return checkpoint(blk, x, use_reentrant=False, **kwargs)
        return blk(x, **kwargs)

    @staticmethod
    def _tokens(state: torch.Tensor) -> torch.Tensor:
        return state

    def _input_norm(self, index: int) -> Optional[nn.Module]:
        """The norm of :attr:`Hidden.norm` for hidden state ``index``."""
        if index < len(self.blocks):
            return getattr(self.blocks[index], 'norm1', None)
        fc_norm = getattr(self, 'fc_norm', None)
        return fc_norm if isinstance(self.norm, nn.Identity) and fc_norm is not None else self.norm

    def attention_heads(self, index: int) -> int:
        """Channels of block ``index``'s attention map: its heads, summed over the branches of a parallel block;
        ``index`` counts as ``num_layers`` does (the blocks, then the class-attention blocks)."""
        stages = list(self.blocks) + list(getattr(self, 'blocks_token_only', None) or ())
        blk = stages[index]
        if hasattr(blk, 'attns'):
            return sum(b.attn.num_heads for b in blk.attns)
        return blk.attn.num_heads

    def iter_hidden(self, x: torch.Tensor, *, keep: Optional[torch.Tensor] = None,
                    attn_indices: Iterable[int] = (), attn_kind: str = 'probs',
                    stop: Optional[int] = None, masked: Optional[torch.Tensor] = None,
                    mask_token: Optional[torch.Tensor] = None) -> Iterator[Hidden]:
        """Hidden states 0 .. ``stop`` + 1 (default: depth) of images ``x`` (B, 3, H, W); see the class docstring."""
        depth = len(self.blocks)
        attn_indices = normalize_indices(list(attn_indices), depth) if attn_indices else []
        if attn_indices and not self.block_attention:
            raise ValueError(f'{type(self).__name__}: its blocks have no attention maps')
        if keep is not None and not self.supports_keep:
            raise ValueError(f'{type(self).__name__}: its blocks cannot run on a subset of the patches (keep): '
                             'that needs global attention without windows or relative positions')
        last = depth - 1 if stop is None else normalize_indices(stop, depth)[0]
        if masked is not None:  # BEiT: the masked patches' tokens replaced after the stem (capability 'token_mask')
            state, grid = self._trunk_input(x, keep, masked=masked, mask_token=mask_token)
        else:
            state, grid = self._trunk_input(x, keep)
        grid = tuple(grid)

        def hidden(index, attn=None):
            tokens = self._tokens(state)
            return Hidden(index, tokens, grid, self.num_prefix_tokens, self._input_norm(index), attn,
                          None if tokens is state else state)
        yield hidden(0)
        for i, blk in enumerate(self.blocks[:last + 1]):
            if i in attn_indices:
                state, attn = blk(state, grid=grid, return_attn=attn_kind)
                yield hidden(i + 1, attn)
            else:
                state = self.run_block(blk, state, grid=grid)
                yield hidden(i + 1)

    def last_hidden(self, x: torch.Tensor, **walk) -> Hidden:
        """The last hidden state of :meth:`iter_hidden` (``walk``: its options); the others are not kept."""
        for hidden in self.iter_hidden(x, **walk):
            pass
        return hidden

    def forward_intermediates(self, x: torch.Tensor, indices: Union[int, Sequence[int], None] = None,
                              norm: bool = False, stop_early: bool = False, output_fmt: str = 'NCHW',
                              intermediates_only: bool = False):
        """timm's ``forward_intermediates`` (``VisionTransformer``'s in timm/models/vision_transformer.py): the
        same arguments, meaning and outputs (``tests/test_forward_intermediates.py`` compares them).

        ``indices``: None every block, an int n the last n blocks, a sequence those blocks (negative from the
        end); the intermediates come in block order, one per block. Each is the block's patch tokens (prefix
        stripped) as a (B, C, H/p, W/p) map (``output_fmt='NCHW'``) or (B, N, C) (``'NLC'``); ``norm``: each
        through the final norm. Returns ``(final features, intermediates)``, the final features being those of
        ``forward_features`` (the final norm; CaiT: after class attention) over the last block run, or only the
        intermediates (``intermediates_only``). ``stop_early``: no block after the last index runs; nor does
        one with ``intermediates_only``, where it changes nothing returned (timm runs them). The maps are views
        where they can be (timm's are contiguous copies): the dense heads read them as the walk left them.
        """
        if output_fmt not in ('NCHW', 'NLC'):
            raise ValueError(f"output_fmt={output_fmt!r}: expected 'NCHW' or 'NLC'")
        take, last = take_indices(indices, len(self.blocks))
        out = []
        for hidden in self.iter_hidden(x, stop=last if stop_early or intermediates_only else None):
            if hidden.index - 1 not in take:
                continue
            if output_fmt == 'NCHW':
                out.append(self._dense_map(hidden, norm))
            else:
                out.append(self.norm(hidden.tokens)[:, hidden.num_prefix_tokens:] if norm else hidden.patches())
        return out if intermediates_only else (self._final_features(hidden.tokens), out)

    def _final_features(self, tokens: torch.Tensor) -> torch.Tensor:
        """What ``forward_features`` returns of the last block's ``tokens``."""
        return self.norm(tokens)

    def _dense_map(self, hidden: Hidden, norm: bool) -> torch.Tensor:
        return hidden.map(self.norm(hidden.tokens) if norm else None)

    @torch.no_grad()
    def forward_attention(self, x: torch.Tensor, indices: Union[int, Sequence[int]] = -1,
                          kind: str = 'probs') -> List[torch.Tensor]:
        """Attention maps (B, heads, N, N) of the blocks in ``indices``: 'probs' (softmax) or 'logits'."""
        indices = normalize_indices(indices, len(self.blocks))
        return [h.attn for h in self.iter_hidden(x, attn_indices=indices, attn_kind=kind, stop=indices[-1])
                if h.attn is not None]
