"""BEiT's masked image modelling (Bao et al., ICLR 2022) around a vitbench ViT, in the conventions of microsoft/unilm
``beit`` (``modeling_pretrain.py``, ``engine_for_pretraining.py``), as "Three things" §5 runs it with each patch stem.

Each image comes as two views of one crop (:class:`pretrain.beit_data.BEiTMaskedViews`): the patch view (224 px)
and the tokenizer view (112 px), with a block-wise mask of about 40 % of the patches (75 of 196). The tokenizer
(:mod:`pretrain.beit_tokenizer`: DALL-E's encoder from a user-given file, or the suite's k-means codebook) turns
the tokenizer view into one visual token per patch position. The ViT sees the patch view with the masked patches'
stem outputs replaced by a learned [MASK] token (after the stem, before the positions: "Three things" masks after
the patch pre-processing, which equals masking pixels for stems that never mix patches, the linear and hMLP ones);
a linear head on the final-norm tokens predicts the visual token of each masked patch, with cross-entropy over
the masked patches of the batch (BEiT's ``lm_head(x[bool_masked_pos])`` and ``CrossEntropyLoss``).

BEiT's model otherwise (what the configs set): LayerScale 0.1 (``init_values``), relative position bias one table
shared by all blocks (``shared_rel_pos_bias``: the pre-training's ``use_shared_rel_pos_bias``; the exported
backbone has a copy per block, as BEiT's fine-tuning makes of it) and no absolute position embedding
(``abs_pos_embed=False``: the table is fixed at zero), drop path 0.1; weights truncated-normal (std 0.02) and the
residual projections (attention ``proj``, MLP ``fc2``) of block l divided by sqrt(2 l) (``fix_init_weight``).

    model = dict(type='BEiT', backbone=dict(type='vitbench.VisionTransformer', arch='three_things_b12_linear',
                                            init_values=0.1, rel_pos_bias=True, drop_path_rate=0.1),
                 tokenizer=dict(type='KMeansTokenizer', checkpoint='work_dirs/beit_tokenizer/kmeans_8192.pth'),
                 data_preprocessor=dict(type='ClsDataPreprocessor', mean=(127.5,) * 3, std=(127.5,) * 3))
"""
import math
from typing import Dict, Optional

import torch
import torch.nn.functional as F
from mmengine.model import BaseModel
from torch import nn

from backbones.contract import missing
from backbones.layers.beit_rel_pos import BEIT_TABLE
from vitbench.registry import MODELS

from .classifier import build_backbone

# what BEiT needs of its backbone (the family contract's capabilities, backbones/contract.py): the class token
# (BEiT's sequence starts with it), a mask token written over the stem's outputs, and a position-embedding table
BEIT_NEEDS = ('class_token', 'token_mask', 'pos_embed_table')


def masked_token_loss(logits: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor):
    """BEiT's objective: ``logits`` (B, N, vocab) of every patch, ``tokens`` (B, N) the tokenizer's ids, ``mask``
    (B, N) bool; cross-entropy averaged over the masked patches of the whole batch (the unmasked ones give no
    loss), and the accuracy of the argmax there."""
    picked, labels = logits[mask], tokens[mask]
    loss = F.cross_entropy(picked.float(), labels)
    return loss, (picked.argmax(-1) == labels).float().mean()


def _trunc_normal_(tensor: torch.Tensor, std: float = .02) -> None:
    nn.init.trunc_normal_(tensor, std=std, a=-std, b=std)  # BEiT truncates at one std


@MODELS.register_module()
class BEiT(BaseModel):
    """Args:
        backbone: the encoder's config (``type``, ``arch`` + overrides: build_backbone).
        tokenizer: a :mod:`pretrain.beit_tokenizer` config (``DALLETokenizer`` / ``KMeansTokenizer``).
        shared_rel_pos_bias: tie the blocks' relative position bias tables into one (BEiT pre-training's).
        abs_pos_embed: keep the learned absolute position embedding (BEiT pre-training: False, fixed at zero).
        init_std: the truncated-normal std of the weights, tokens and head (0.02).
    """
    recipe = 'beit'
    needs = BEIT_NEEDS

    def __init__(self, backbone: dict, tokenizer: dict, shared_rel_pos_bias: bool = True,
                 abs_pos_embed: bool = False, init_std: float = .02, data_preprocessor: Optional[dict] = None,
                 init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone, self.arch, self.backbone_overrides = build_backbone(backbone, num_classes=0)
        vit = self.backbone
        who = f'BEiT encoder {self.arch!r}'
        lacking = missing(vit, BEIT_NEEDS)
        if lacking:
            raise ValueError(f'{who}: masked image modelling needs {lacking}')
        fc_norm = getattr(vit, 'fc_norm', None)
        if fc_norm is not None and not isinstance(fc_norm, nn.Identity):
            raise ValueError(f"{who}: BEiT predicts from the final norm's tokens; pre-train with global_pool='token' "
                             f"(got {vit.global_pool!r}, whose fc_norm replaces it)")
        # not a submodule: the frozen tokenizer stays out of the checkpoints and the optimiser
        self._tokenizer = (MODELS.build(tokenizer),)
        self.tokenizer_tag = self.tokenizer.tag
        self.mask_token = nn.Parameter(torch.zeros(1, 1, vit.embed_dim))
        self.lm_head = nn.Linear(vit.embed_dim, self.tokenizer.vocab_size)
        self._init(init_std)
        tables = [m for m in vit.modules() if isinstance(getattr(m, BEIT_TABLE, None), nn.Parameter)]
        if shared_rel_pos_bias:
            if not tables:
                raise ValueError(f'{who}: shared_rel_pos_bias ties the relative position bias tables, and the '
                                 'backbone has none: set model.backbone.rel_pos_bias=True')
            for m in tables[1:]:
                setattr(m, BEIT_TABLE, getattr(tables[0], BEIT_TABLE))
        if not abs_pos_embed:
            vit.pos_embed.data.zero_()
            vit.pos_embed.requires_grad_(False)

    @property
    def tokenizer(self) -> nn.Module:
        return self._tokenizer[0]

    def _init(self, std: float) -> None:
        """BEiT's ``_init_weights`` and ``fix_init_weight``."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Conv2d)):
                _trunc_normal_(m.weight, std)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        for token in (self.backbone.cls_token, self.mask_token):
            _trunc_normal_(token, std)
        for name, param in self.backbone.named_parameters():
            if name.endswith(('attn.proj.weight', 'mlp.fc2.weight')):
                param.data.div_(math.sqrt(2. * self.backbone.get_layer_id(name)))  # block l has layer id l

    def targets(self, tokenizer_view: torch.Tensor, grid) -> torch.Tensor:
        """(B, N) visual token ids of the tokenizer views, checked against the patch grid."""
        tok = self.tokenizer.to(tokenizer_view.device)
        with torch.autocast(tokenizer_view.device.type, enabled=False):  # BEiT runs its tokenizer outside AMP
            ids = tok.tokens(tokenizer_view.float())
        if tuple(ids.shape[1:]) != tuple(grid):
            raise ValueError(f'BEiT: the tokenizer gives a {tuple(ids.shape[1:])} grid of tokens and the ViT a '
                             f'{tuple(grid)} grid of patches: the tokenizer view must be {tok.downsample} x the '
                             'patch grid (BEiTMaskedViews second_size)')
        return ids.flatten(1)

    def logits(self, imgs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, N, vocab): the head on every patch token of the ViT run with ``mask`` (B, N) bool."""
        hidden = self.backbone.last_hidden(imgs, masked=mask, mask_token=self.mask_token)
        return self.lm_head(hidden.normed()[:, hidden.num_prefix_tokens:])

    @staticmethod
    def _views(inputs):
        if not (isinstance(inputs, (list, tuple)) and len(inputs) == 2):
            raise ValueError('BEiT: expected the two views of BEiTMaskedViews (patch view, tokenizer view), packed '
                             'by PackInputs as two tensors')
        return [v[:, 0] if v.dim() == 5 else v for v in inputs]

    def forward(self, inputs, data_samples=None, mode: str = 'tensor'):
        if mode == 'loss':
            return self.loss(inputs, data_samples)
        if mode == 'tensor':
            imgs, _ = self._views(inputs)
            return self.logits(imgs, data_samples['beit_mask'].flatten(1).bool())
        raise ValueError(f"BEiT: mode must be 'loss' or 'tensor' (no validation: it is evaluated by fine-tuning), "
                         f'got {mode!r}')

    def loss(self, inputs, data_samples) -> Dict[str, torch.Tensor]:
        imgs, tokenizer_view = self._views(inputs)
        mask = data_samples['beit_mask'].flatten(1).bool().to(imgs.device)
        grid = (imgs.shape[-2] // self.backbone.patch_size, imgs.shape[-1] // self.backbone.patch_size)
        with torch.no_grad():
            tokens = self.targets(tokenizer_view, grid)
        loss, acc = masked_token_loss(self.logits(imgs, mask), tokens, mask)
        return dict(loss=loss, mlm_acc=acc.detach())
