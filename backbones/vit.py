"""Vision Transformer: ViT / DeiT (optional distillation token), DeiT III (LayerScale), parallel ViT,
hMLP stem, the 12-head ViT-Tiny of MAE-lite, average pooling with fc_norm (MAE fine-tuning), windowed
attention (ViTDet) and dense multi-level outputs.
"""
from typing import Optional, Sequence, Tuple

import torch
from mmengine.model import BaseModule
from timm.layers import trunc_normal_
from torch import nn

from .block_walk import gather_tokens
from .contract import FamilyModel
from .family import Family, register_family
from .layers import (Block, ClassAttentionBlock, HMLPStem, LeViTStem, ParallelBlock, PatchEmbed,
                     TalkingHeadAttention, drop_path_rates, is_rel_pos_key, resample_pos_embed)
from .layers.residual_scale import SCALES_FROM_CHECKPOINT, apply_scheme_init, check_scheme_blocks
from .layers.residual_scale import residual_scale as scheme_of
from .vit_options import check_vit_options

ATTN_LAYERS = {'standard': None, 'talking_heads': TalkingHeadAttention}  # None: the Block's default Attention


STEMS = {'linear': PatchEmbed, 'hmlp': HMLPStem, 'levit': LeViTStem}


def layer_norm(eps: float):
    return lambda dim: nn.LayerNorm(dim, eps=eps)


class ViTFamilyMixin(FamilyModel):
    """What the patch-based models share (:class:`VisionTransformer`, CaiT, ResMLP, PatchConvNet): the
    official initialisation, the mmengine init hook, the patch grid and size, the dims, the layer ids of layer-wise
    decay and the walk through the blocks (:class:`~backbones.block_walk.BlockWalkMixin`: ``iter_hidden``,
    ``forward_intermediates``, ``forward_attention``): most of the family contract (backbones/contract.py).

    The model provides ``patch_embed``, the parameters named in ``embedding_params`` (None where absent),
    ``blocks`` (and ``blocks_token_only`` for a class-attention stage, None where absent), the final
    ``norm`` and what the walk needs (``_trunk_input``; see ``BlockWalkMixin``).
    """
    # initialised in this order (it fixes the seeded init) and exempt from weight decay
    embedding_params: Tuple[str, ...]
    # top-level names of layer 0 of layer-wise decay: the embedding stage
    layer0_names: Tuple[str, ...] = ('cls_token', 'dist_token', 'pos_embed', 'patch_embed')

    @property
    def grid_size(self) -> Tuple[int, int]:
        return self.patch_embed.grid_size

    @property
    def patch_size(self):
        """The side of the square patches (the maps' stride); (height, width) where they are not square."""
        h, w = self.patch_embed.patch_size
        return h if h == w else (h, w)

    def _init_weights(self):
        # the official DeiT / CaiT initialisation; the patch conv keeps PyTorch's default
        if next(self.parameters()).is_meta:  # nothing to fill (e.g. counting parameters); slow on meta
            return
        for p in (getattr(self, name) for name in self.embedding_params):
            if p is not None:
                trunc_normal_(p, std=.02)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                trunc_normal_(m.weight, std=.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def _set_dims(self, num_classes: int, global_pool: str, embed_dim: int, depth: int):
        self.num_classes = num_classes
        self.global_pool = global_pool
        self.embed_dim = self.num_features = embed_dim
        self.depth = depth

    def _build_head(self, norm: nn.Module, drop_rate: float):
        """The final ``norm``, the classifier's dropout and linear ``head`` (Identity without classes)."""
        self.norm = norm
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(self.embed_dim, self.num_classes) if self.num_classes > 0 else nn.Identity()

    # layer-wise learning-rate decay (BEiT / MAE convention)
    @property
    def num_layers(self) -> int:
        """Blocks, plus class-attention blocks; ``get_layer_id`` returns ids in [0, num_layers + 1]."""
        return len(self.blocks) + len(getattr(self, 'blocks_token_only', None) or ())

    top_layer_names = ('norm', 'fc_norm', 'head', 'head_dist')  # after the blocks: the final norm, pooling, heads

    def get_layer_id(self, param_name: str) -> int:
        """0 for the embedding stage (``layer0_names``), i + 1 for ``blocks.i``, depth + j + 1 for
        ``blocks_token_only.j`` (a class token not in ``layer0_names`` joins there too: it only enters the
        class-attention stage), num_layers + 1 for the final norm and the head.

        With decay rate d, a parameter's lr scale is ``d ** (num_layers + 1 - get_layer_id(name))``.
        A leading ``backbone.`` is ignored.
        """
        name = param_name[len('backbone.'):] if param_name.startswith('backbone.') else param_name
        top = name.split('.')[0]
        if top in self.layer0_names:
            return 0
        if top == 'blocks':
            return int(name.split('.')[1]) + 1
        if top == 'blocks_token_only':
            return len(self.blocks) + int(name.split('.')[1]) + 1
        if top == 'cls_token':
            return len(self.blocks) + 1
        if top in self.top_layer_names:
            return self.num_layers + 1
        # never the top layer's rate by default: a parameter this rule does not know is a rule to write
        raise KeyError(f'{param_name}: get_layer_id of {type(self).__name__} knows no layer for it (embeddings '
                       f'{self.layer0_names}, blocks, top {self.top_layer_names})')

    def init_weights(self):
        """mmengine hook: weights are initialised at construction; a ``Pretrained`` init_cfg is loaded here
        with the format-detecting loader (mmengine's own loader knows none of the official formats)."""
        from .checkpoint import init_from_cfg
        if not init_from_cfg(self):
            super().init_weights()

    @torch.jit.ignore
    def no_weight_decay(self):
        return set(self.embedding_params)


class VisionTransformer(ViTFamilyMixin, BaseModule):
    """Vision Transformer (Dosovitskiy et al.) with the DeiT, DeiT III, three-things and MAE options.

    Args:
        img_size: training resolution; sizes the position-embedding table. Other sizes divisible by the
            patch size work at run time (the table is interpolated bicubically).
        global_pool: 'token' (class token), 'avg' (mean of the patch tokens, followed by ``fc_norm`` instead
            of the final norm, as MAE fine-tuning) or '' (no pooling).
        init_values: LayerScale init ε (DeiT III: 1e-4), or 'by_depth' (CaiT's rule: 0.1 up to depth 18, 1e-5 at
            24, 1e-6 deeper); None disables LayerScale.
        residual_scale: how each residual branch is weighted (backbones/layers/residual_scale.py, CaiT Table 1):
            'none', 'layerscale' (per channel, ε), 'rezero' (scalar α = 0), 'scalar' (α = ε), 'fixup', 't_fixup'
            (α = 1 with the init of those papers, pre-norm kept as CaiT ran them); None: 'layerscale' where
            ``init_values`` is set, else 'none'.
        layer_scale_init: LayerScale's init, 'const' (every value ε), 'zero' or 'uniform' (U[0, 2ε]) (thesis
            Table 3.12).
        residual_scale_trainable: False freezes the scales (thesis §3.5.3: re-training with fixed weights);
            ``residual_scale_from`` (a checkpoint, e.g. a LayerScale training's backbone.pth) sets them first;
            'checkpoint': those of the run's ``--checkpoint`` (the rest of that file is not loaded).
        attn_layer: 'standard' or 'talking_heads' (Shazeer et al., 2020; CaiT Table 4's "+ talking-heads").
        cls_insert_layer: the block before which the class (and distillation) token joins: 0 as ViT; k > 0 holds
            it out of blocks 0 .. k-1, unchanged and unseen (CaiT Table 2's late insertion; thesis Table 3.13).
        depth_token_only: class-attention blocks after the trunk (CaiT §3): the class token skips the
            self-attention blocks and only these update it, reading the patches ("12 + 2" on DeiT-S).
        distilled: add DeiT's distillation token and head; in eval the logits are the mean of both heads.
        no_embed_class: position embeddings for the patch tokens only (DeiT III, CaiT official code).
        num_parallel: branches per block (three-things parallel ViT); ``depth`` counts parallel layers.
        fuse_parallel: run a parallel layer's branches as one wider operation (default; the same function of
            the same parameters, ``layers/parallel_fused.py``) or one after the other (False: Table 4's "seq").
        stem: the patch stem ("Three things" Table 7): 'linear' projection (``stem_norm`` None, 'bn' or 'ln'
            and ``stem_act`` GELU after it), 'hmlp' or LeViT's convolutional stem 'levit' (``stem_norm`` 'bn',
            the default for both, or 'ln'). ``layers/stems.py``.
        drop_path_uniform: same stochastic-depth rate in every block (DeiT III, three-things) instead of
            linearly increasing (DeiT, timm).
        window_size: > 0 restricts attention to windows of that many tokens per side in every block except
            ``global_attn_indexes`` (ViTDet).
        use_rel_pos: ViTDet's decomposed relative position biases in every block (detectron2 ``use_rel_pos``),
            zero-initialised, between patch tokens: tables of 2 * window_size - 1 rows per axis in windowed
            blocks, 2 * (img_size / patch) - 1 in global ones (interpolated for other input sizes). Pretrained
            checkpoints have none: they load with the tables left at zero.
        rel_pos_bias: BEiT's relative position bias instead (``layers/beit_rel_pos.py``; BEiT's and MAE's
            segmentation fine-tuning, mmsegmentation's MAE backbone): in every block a table of one scalar per
            head for each offset between patch tokens of the ``img_size`` grid, and three for the class token,
            zero-initialised (a checkpoint without it loads with the tables at zero). Global attention only;
            not with ``use_rel_pos``; at most one prefix token (the class token).
        init_cfg: mmengine init config; ``dict(type='Pretrained', checkpoint=...)`` goes through
            ``backbones.load_checkpoint`` (format detection, pos-embed interpolation, strict key checks).
    """
    # Checkpoint keys this family may carry that a given model may legitimately lack (dropped with a note)
    # and the subset a checkpoint may lack (left at their fresh initialisation, with a note).
    checkpoint_optional = ('cls_token', 'norm.', 'fc_norm.', 'head.', 'head_dist.')
    checkpoint_may_miss = ('fc_norm.', 'head.', 'head_dist.')
    embedding_params = ('pos_embed', 'cls_token', 'dist_token')
    num_prefix_tokens = 1  # the class token; __init__ sets each model's: 0 without it, 2 with the distillation token
    block_attention = True

    def __init__(self, img_size=224, patch_size=16, in_chans: int = 3, num_classes: int = 1000,
                 global_pool: str = 'token', embed_dim: int = 768, depth: int = 12, num_heads: int = 12,
                 mlp_ratio: float = 4., qkv_bias: bool = True, init_values: Optional[float] = None,
                 class_token: bool = True, distilled: bool = False, no_embed_class: bool = False,
                 num_parallel: int = 1, fuse_parallel: bool = True, stem: str = 'linear',
                 stem_norm: Optional[str] = None, stem_act: bool = False,
                 fc_norm: Optional[bool] = None, final_norm: bool = True, drop_rate: float = 0.,
                 attn_drop_rate: float = 0., proj_drop_rate: float = 0., drop_path_rate: float = 0.,
                 drop_path_uniform: bool = False, norm_eps: float = 1e-6, window_size: int = 0,
                 global_attn_indexes: Sequence[int] = (), use_rel_pos: bool = False, rel_pos_bias: bool = False,
                 residual_scale: Optional[str] = None, layer_scale_init: str = 'const',
                 residual_scale_trainable: bool = True, residual_scale_from: Optional[str] = None,
                 attn_layer: str = 'standard', cls_insert_layer: int = 0, depth_token_only: int = 0,
                 init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        check_vit_options(global_pool=global_pool, class_token=class_token, distilled=distilled,
                          num_parallel=num_parallel, rel_pos_bias=rel_pos_bias, use_rel_pos=use_rel_pos,
                          window_size=window_size, stem=stem, stems=tuple(STEMS), stem_act=stem_act, depth=depth,
                          cls_insert_layer=cls_insert_layer, depth_token_only=depth_token_only,
                          attn_layer=attn_layer, attn_layers=tuple(ATTN_LAYERS))
        self.residual_scheme = scheme_of(residual_scale, init_values, depth, layer_scale_init,
                                         residual_scale_trainable)
        self.attn_kind = attn_layer
        norm_layer = layer_norm(norm_eps)
        use_fc_norm = global_pool == 'avg' if fc_norm is None else fc_norm

        self._set_dims(num_classes, global_pool, embed_dim, depth)
        self.distilled = distilled
        self.distilled_training = False
        self.no_embed_class = no_embed_class
        self.num_prefix_tokens = int(class_token) + int(distilled)

        if stem == 'linear':
            self.patch_embed = PatchEmbed(img_size, patch_size, in_chans, embed_dim, norm=stem_norm, act=stem_act)
        else:
            self.patch_embed = STEMS[stem](img_size, patch_size, in_chans, embed_dim, norm=stem_norm or 'bn')
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim)) if class_token else None
        self.dist_token = nn.Parameter(torch.zeros(1, 1, embed_dim)) if distilled else None
        self.pos_embed = nn.Parameter(
            torch.zeros(1, self.patch_embed.num_patches + self.pos_embed_prefix, embed_dim))

        block, extra = (Block, {}) if num_parallel == 1 else \
            (ParallelBlock, dict(num_parallel=num_parallel, fused=fuse_parallel))
        if ATTN_LAYERS[attn_layer] is not None:
            extra['attn_layer'] = ATTN_LAYERS[attn_layer]
        dpr = drop_path_rates(drop_path_rate, depth, drop_path_uniform)
        windows = [0 if i in global_attn_indexes else window_size for i in range(depth)]
        # a block's relative positions span its attention grid: its window, or the whole token grid
        self.use_rel_pos = use_rel_pos or rel_pos_bias
        rel_pos_sizes = [((w, w) if w else tuple(self.patch_embed.grid_size)) if self.use_rel_pos else None
                         for w in windows]
        if rel_pos_bias:
            extra = dict(extra, rel_pos_kind='beit')
        self.blocks = nn.ModuleList([
            block(embed_dim, num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias, init_values=self.residual_scheme,
                  drop_path=dpr[i], attn_drop=attn_drop_rate, proj_drop=proj_drop_rate, norm_layer=norm_layer,
                  window_size=windows[i], num_prefix_tokens=self.num_prefix_tokens,
                  rel_pos_size=rel_pos_sizes[i], **extra)
            for i in range(depth)])
        check_scheme_blocks(self.residual_scheme, self.blocks)
        # a late class token: held out of the blocks before it (all of them ahead of a class-attention stage)
        self.cls_insert_layer = depth if depth_token_only else cls_insert_layer
        for blk in self.blocks[:self.cls_insert_layer]:
            blk.held_prefix, blk.num_prefix_tokens = self.num_prefix_tokens, 0
        # no stochastic depth in the class-attention blocks (official cait_models.py: drop_path=0.0)
        self.blocks_token_only = nn.ModuleList([
            ClassAttentionBlock(embed_dim, num_heads, mlp_ratio=mlp_ratio, qkv_bias=qkv_bias,
                                init_values=self.residual_scheme, attn_drop=attn_drop_rate,
                                proj_drop=proj_drop_rate, norm_layer=norm_layer)
            for _ in range(depth_token_only)]) if depth_token_only else None
        if self.use_rel_pos:  # new parameters: checkpoints (pretrained without them) may lack them
            self.checkpoint_may_miss = self.checkpoint_may_miss + tuple(
                name for name, _ in self.named_parameters() if is_rel_pos_key(name))
        self.norm = norm_layer(embed_dim) if final_norm and not use_fc_norm else nn.Identity()
        self.fc_norm = norm_layer(embed_dim) if final_norm and use_fc_norm else nn.Identity()
        self.head_drop = nn.Dropout(drop_rate)
        self.head = nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()
        self.head_dist = (nn.Linear(embed_dim, num_classes) if num_classes > 0 else nn.Identity()) \
            if distilled else None
        self._init_weights()
        if not next(self.parameters()).is_meta:  # on meta (counting parameters) there are no values to set
            apply_scheme_init(self.residual_scheme, self.blocks, self.head)
            if residual_scale_from is not None:
                self.load_residual_scales(residual_scale_from)

    def load_residual_scales(self, path: str) -> None:
        """Set every residual branch's scale (``*.ls1.gamma``, ``*.ls2.gamma``, ``*.ls.gamma``) to its value in the
        checkpoint ``path`` (any format ``load_checkpoint`` reads); the other weights keep their init (thesis
        §3.5.3: a model re-trained from scratch with the scales an earlier training learnt)."""
        from .checkpoint import read_checkpoint, to_canonical
        if path == SCALES_FROM_CHECKPOINT:  # tools/train.py replaces it by --checkpoint's path (backbone_swap.py)
            raise ValueError(f'residual_scale_from={path!r}: the scales of the run\'s --checkpoint, and the run has '
                             'none: pass tools/train.py CONFIG --checkpoint PATH (a LayerScale training\'s '
                             'backbone.pth), or give the path itself')
        state = to_canonical(read_checkpoint(path), path).state_dict
        own = {n: p for n, p in self.named_parameters() if n.endswith(('ls1.gamma', 'ls2.gamma', 'ls.gamma'))}
        if not own:
            raise ValueError(f'residual_scale_from={path!r}: this model has no residual scales '
                             f"(residual_scale={self.residual_scheme.scheme!r})")
        absent = sorted(n for n in own if n not in state)
        if absent:
            raise ValueError(f'residual_scale_from={path!r}: the checkpoint lacks {len(absent)} of the '
                             f'{len(own)} residual scales, first {absent[0]!r} (a model of another depth?)')
        wrong = [n for n, p in own.items() if state[n].shape != p.shape]
        if wrong:
            raise ValueError(f'residual_scale_from={path!r}: {wrong[0]} has shape {tuple(state[wrong[0]].shape)}, '
                             f'the model {tuple(own[wrong[0]].shape)} (per-channel LayerScale vs a scalar scheme?)')
        with torch.no_grad():
            for name, p in own.items():
                p.copy_(state[name])

    @property
    def pos_embed_prefix(self) -> int:
        """Number of prefix tokens (class, distillation) that have a row in ``pos_embed``."""
        return 0 if self.no_embed_class else self.num_prefix_tokens

    def set_distilled_training(self, enable: bool = True):
        """In train mode, return (class logits, distillation logits) instead of their mean."""
        self.distilled_training = enable

    @property
    def supports_keep(self) -> bool:
        """Whether the blocks can run on a subset of the patches: not with windows or relative positions."""
        return not self.use_rel_pos and not any(blk.window_size for blk in self.blocks)

    def _pos_embed(self, x: torch.Tensor, grid: Tuple[int, int], keep: Optional[torch.Tensor] = None):
        pos_embed = resample_pos_embed(self.pos_embed, grid, self.grid_size, self.pos_embed_prefix)
        if keep is not None:  # the patches' positions first, then the kept ones (MAE)
            p = self.pos_embed_prefix
            x = gather_tokens(x + pos_embed[:, p:], keep)
            prefix = [t + pos_embed[:, i:i + 1] if p else t
                      for i, t in enumerate(t for t in (self.cls_token, self.dist_token) if t is not None)]
            return torch.cat([t.expand(x.shape[0], -1, -1) for t in prefix] + [x], dim=1)
        prefix = [t.expand(x.shape[0], -1, -1) for t in (self.cls_token, self.dist_token) if t is not None]
        if self.no_embed_class:
            return torch.cat(prefix + [x + pos_embed], dim=1)
        return torch.cat(prefix + [x], dim=1) + pos_embed

    def _trunk_input(self, x: torch.Tensor, keep: Optional[torch.Tensor] = None,
                     masked: Optional[torch.Tensor] = None, mask_token: Optional[torch.Tensor] = None):
        x, grid = self.patch_embed(x)
        if masked is not None:  # BEiT: masked after the stem ("Three things" §5), before the positions
            if masked.shape != x.shape[:2]:
                raise ValueError(f'masked is {tuple(masked.shape)}, expected (batch, patches) = {tuple(x.shape[:2])}')
            w = masked.unsqueeze(-1).to(x.dtype)
            x = x * (1 - w) + mask_token.to(x.dtype) * w
        return self._pos_embed(x, grid, keep), grid

    def forward_features(self, x: torch.Tensor, prefix_only: bool = False) -> torch.Tensor:
        """(B, 3, H, W) -> normalised tokens (B, prefix + H/p * W/p, C).

        ``prefix_only`` returns just the class / distillation tokens (B, prefix, C): the last block then
        updates only them, which is all a class-token classifier reads (same logits, ~1/depth less work).
        """
        x, grid = self._trunk_input(x)
        last = len(self.blocks) - 1
        # only the class-token path of plain attention can skip the patches' queries in the last block
        skip = prefix_only and self.attn_kind == 'standard' and self.blocks_token_only is None
        for i, blk in enumerate(self.blocks):
            x = blk(x, grid=grid, num_queries=self.num_prefix_tokens if skip and i == last else None)
        if self.blocks_token_only is not None:
            x = self.class_attention(x, prefix_only)
        return self.norm(x)

    def class_attention(self, tokens: torch.Tensor, prefix_only: bool = False) -> torch.Tensor:
        """The class-attention stage (``depth_token_only`` blocks) over the trunk's [class token, patches]: the
        class token, updated; with the patches after it unless ``prefix_only``."""
        cls_token, patches = tokens[:, :1], tokens[:, 1:]
        for blk in self.blocks_token_only:
            cls_token = blk(patches, cls_token)
        return cls_token if prefix_only else torch.cat([cls_token, patches], dim=1)

    def _final_features(self, tokens: torch.Tensor) -> torch.Tensor:
        if self.blocks_token_only is not None:
            tokens = self.class_attention(tokens)
        return self.norm(tokens)

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False):
        if self.distilled:
            x, x_dist = self.head_drop(x[:, 0]), self.head_drop(x[:, 1])
            if pre_logits:
                return (x + x_dist) / 2
            x, x_dist = self.head(x), self.head_dist(x_dist)
            if self.distilled_training and self.training:
                return x, x_dist
            return (x + x_dist) / 2  # the official inference: mean of the two classifiers
        if self.global_pool == 'token':
            x = x[:, 0]
        elif self.global_pool == 'avg':
            x = x[:, self.num_prefix_tokens:].mean(dim=1)
        x = self.head_drop(self.fc_norm(x))
        return x if pre_logits else self.head(x)

    def forward_heads(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """Distilled model: (class logits, distillation logits) of images (B, 3, H, W), in train and eval mode
        (``forward`` gives their mean in eval); the classifier combines them by its ``distill_inference``."""
        if not self.distilled:
            raise ValueError('forward_heads: this model has no distillation head (distilled=False)')
        x = self.forward_features(x, prefix_only=True)
        return self.head(self.head_drop(x[:, 0])), self.head_dist(self.head_drop(x[:, 1]))

    def forward(self, x: torch.Tensor):
        # class-token pooling reads only the prefix tokens: the last block need not update the patches
        return self.forward_head(self.forward_features(x, prefix_only=self.global_pool == 'token'))


# the family's record (backbones/family.py): ViTDet's windowed attention and relative positions in Mask R-CNN
register_family(Family(name='vit', title='ViT', model_class=VisionTransformer, dense_type='VisionTransformer',
                       windowed=True))
