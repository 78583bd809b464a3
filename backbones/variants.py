"""Named backbone variants: one table, architecture only (training recipes set drop path etc.).

Each entry: its family (``model``: the name of a record of backbones/family.py, 'vit', 'cait', 'resmlp' or
'patchconvnet'), its constructor arguments, the paper and the official checkpoint convention the arguments
reproduce. ``tools/list_backbones.py`` prints the table. A family of one's own adds its variants with its record
(``register_family(..., variants=...)``, docs/extending-backbone.md).
"""

DEIT = 'DeiT (Touvron et al., ICML 2021)'
DEIT3 = 'DeiT III (Touvron et al., ECCV 2022)'
THREE = 'Three things (Touvron et al., ECCV 2022)'
CAIT = 'CaiT (Touvron et al., ICCV 2021)'
MAE_LITE = 'MAE-lite (Wang et al., ICML 2023)'
RESMLP = 'ResMLP (Touvron et al., TPAMI 2022)'
PATCHCONVNET = 'PatchConvNet (Touvron et al., arXiv 2112.13692)'
DEMO = 'vitbench demo'

_TINY = dict(embed_dim=192, num_heads=3)
_SMALL = dict(embed_dim=384, num_heads=6)
_MEDIUM = dict(embed_dim=512, num_heads=8)
_BASE = dict(embed_dim=768, num_heads=12)
_LARGE = dict(embed_dim=1024, num_heads=16)
_HUGE = dict(embed_dim=1280, num_heads=16)

# DeiT: the original timm ViT; position embeddings cover the class (and distillation) token.
_DEIT = dict(patch_size=16, depth=12)
# DeiT III / three things (official models_v2.py): LayerScale 1e-4, patch-only position embeddings,
# the same drop-path rate in every block.
_DEIT3 = dict(patch_size=16, depth=12, init_values=1e-4, no_embed_class=True, drop_path_uniform=True)

# three things Table 7's ViT-B12: the DeiT III layout without LayerScale (the 300-epoch baseline of Table 1)
_B12 = dict(_DEIT3, init_values=None)


def _vit(paper, **kwargs):
    return dict(model='vit', paper=paper, kwargs=dict({'img_size': 224}, **kwargs))


def _cait(embed_dim, depth, num_heads, init_values, img_size=224):
    return dict(model='cait', paper=CAIT, kwargs=dict(
        img_size=img_size, patch_size=16, embed_dim=embed_dim, depth=depth, num_heads=num_heads,
        init_values=init_values, depth_token_only=2))


def _resmlp(embed_dim, depth, init_values, patch_size=16, img_size=224, paper=RESMLP):
    # official resmlp_models.py: LayerScale init by depth as CaiT's rule (thesis §4.3.1)
    return dict(model='resmlp', paper=paper, kwargs=dict(
        img_size=img_size, patch_size=patch_size, embed_dim=embed_dim, depth=depth, init_values=init_values))


def _patchconvnet(embed_dim, depth, init_values, patch_size=16, img_size=224, paper=PATCHCONVNET):
    # official patchconvnet_models.py: LayerScale 1e-4, 1e-6 for the 120-block models
    return dict(model='patchconvnet', paper=paper, kwargs=dict(
        img_size=img_size, patch_size=patch_size, embed_dim=embed_dim, depth=depth, init_values=init_values))


VARIANTS = {
    'deit_tiny_patch16_224': _vit(DEIT, **_DEIT, **_TINY),
    'deit_small_patch16_224': _vit(DEIT, **_DEIT, **_SMALL),
    'deit_base_patch16_224': _vit(DEIT, **_DEIT, **_BASE),
    'deit_tiny_distilled_patch16_224': _vit(DEIT, **_DEIT, **_TINY, distilled=True),
    'deit_small_distilled_patch16_224': _vit(DEIT, **_DEIT, **_SMALL, distilled=True),
    'deit_base_distilled_patch16_224': _vit(DEIT, **_DEIT, **_BASE, distilled=True),

    'deit3_tiny_patch16_224': _vit(DEIT3, **_DEIT3, **_TINY),  # thesis Tables 6.12, 6.14 (ViT-T)
    'deit3_small_patch16_224': _vit(DEIT3, **_DEIT3, **_SMALL),
    'deit3_medium_patch16_224': _vit(DEIT3, **_DEIT3, **_MEDIUM),
    'deit3_base_patch16_224': _vit(DEIT3, **_DEIT3, **_BASE),
    'deit3_large_patch16_224': _vit(DEIT3, **dict(_DEIT3, depth=24), **_LARGE),
    'deit3_huge_patch14_224': _vit(DEIT3, **dict(_DEIT3, depth=32, patch_size=14), **_HUGE),
    # three things: 36 (MHSA, FFN) pairs as 36 sequential blocks or 18 layers of 2 parallel branches
    'deit3_small_patch16_36': _vit(THREE, **dict(_DEIT3, depth=36), **_SMALL),
    'deit3_base_patch16_36': _vit(THREE, **dict(_DEIT3, depth=36), **_BASE),
    'deit3_small_patch16_18x2': _vit(THREE, **dict(_DEIT3, depth=18), **_SMALL, num_parallel=2),
    'deit3_base_patch16_18x2': _vit(THREE, **dict(_DEIT3, depth=18), **_BASE, num_parallel=2),
    # the 1B-parameter ViT-H of thesis Table 6.6 (§6.3.2.3, "ViT-H 52 layers and ViT-H 26 layers parallel"): the
    # official models_v2.py deit_huge_patch14_52_LS / deit_huge_patch14_26x2_LS, ViT-H's width, heads and patch 14
    'deit3_huge_patch14_52': _vit(THREE, **dict(_DEIT3, depth=52, patch_size=14), **_HUGE),
    'deit3_huge_patch14_26x2': _vit(THREE, **dict(_DEIT3, depth=26, patch_size=14), **_HUGE, num_parallel=2),

    # three things Table 7: the ViT-B12 of Table 1's 300-epoch baseline (no LayerScale) with each patch stem, and the
    # ViT-B13 that spends the conv stem's extra FLOPs on a 13th block
    'three_things_b12_linear': _vit(THREE, **_B12, **_BASE),
    'three_things_b12_linear_bn': _vit(THREE, **_B12, **_BASE, stem_norm='bn'),
    'three_things_b12_linear_gelu': _vit(THREE, **_B12, **_BASE, stem_act=True),
    'three_things_b12_linear_bn_gelu': _vit(THREE, **_B12, **_BASE, stem_norm='bn', stem_act=True),
    'three_things_b13_linear': _vit(THREE, **dict(_B12, depth=13), **_BASE),
    'three_things_b12_levit_bn': _vit(THREE, **_B12, **_BASE, stem='levit', stem_norm='bn'),
    'three_things_b12_levit_ln': _vit(THREE, **_B12, **_BASE, stem='levit', stem_norm='ln'),
    'three_things_b12_hmlp_bn': _vit(THREE, **_B12, **_BASE, stem='hmlp', stem_norm='bn'),
    'three_things_b12_hmlp_ln': _vit(THREE, **_B12, **_BASE, stem='hmlp', stem_norm='ln'),

    # DeiT-Tiny widths with 12 heads of 16 channels (MAE-lite's vit_tiny_patch16); MAE-lite fine-tunes it
    # with global_pool='avg' (fc_norm), its pre-training encoder uses the class token and the final norm.
    'vit_tiny12h_patch16_224': _vit(MAE_LITE, patch_size=16, depth=12, embed_dim=192, num_heads=12),

    # paper Table 3: LayerScale init 1e-5 at depth 24, 1e-6 deeper
    'cait_xxs24_224': _cait(192, 24, 4, 1e-5),
    'cait_xxs36_224': _cait(192, 36, 4, 1e-6),
    'cait_xs24_224': _cait(288, 24, 6, 1e-5),
    'cait_s24_224': _cait(384, 24, 8, 1e-5),
    'cait_s36_224': _cait(384, 36, 8, 1e-6),
    'cait_m36_384': _cait(768, 36, 16, 1e-6, img_size=384),
    # the rest of CaiT Table 3 (M-48: thesis Table 3.16 only), and M-36 / M-48 at 224, the resolution every
    # CaiT is trained at before its 384 / 448 fine-tuning (configs/pretrain/cait_*_in1k_400e.py)
    'cait_xs36_224': _cait(288, 36, 6, 1e-6),
    'cait_s48_224': _cait(384, 48, 8, 1e-6),
    'cait_m24_224': _cait(768, 24, 16, 1e-5),
    'cait_m36_224': _cait(768, 36, 16, 1e-6),
    'cait_m48_224': _cait(768, 48, 16, 1e-6),
    # thesis Table 6.13's CaiT-B12, trained with the DeiT III recipe: in the CaiT paper's naming, 12 SA blocks (+ 2
    # CA) at ViT-B's width 768, 16 heads (d = 48 x heads, CaiT §4.1), LayerScale 0.1 (CaiT §2: up to depth 18). The
    # table's 100.0M parameters are its count without the 1000-class classifier (100.77M with it); 18.2 GFLOPs
    # (12 heads would give 18.1)
    'cait_b12_224': _cait(768, 12, 16, 0.1),

    # ResMLP-S12 / S24 / S36 (thesis Table 4.3: 15.4M / 30.0M / -) and B24/8, the official resmlpB_24 (129.1M)
    'resmlp_12': _resmlp(384, 12, 0.1),
    'resmlp_24': _resmlp(384, 24, 1e-5),
    'resmlp_36': _resmlp(384, 36, 1e-6),
    'resmlp_b24': _resmlp(768, 24, 1e-6, patch_size=8),

    # PatchConvNet S / B / L = width 384 / 768 / 1024, the number = trunk depth (thesis Table 5.1, 5.2)
    'patchconvnet_s60': _patchconvnet(384, 60, 1e-4),
    'patchconvnet_s120': _patchconvnet(384, 120, 1e-6),
    'patchconvnet_b60': _patchconvnet(768, 60, 1e-4),
    'patchconvnet_b120': _patchconvnet(768, 120, 1e-6),
    'patchconvnet_l60': _patchconvnet(1024, 60, 1e-4),
    'patchconvnet_l120': _patchconvnet(1024, 120, 1e-6),

    # a DeiT-Tiny-width ViT at half the depth on 64x64 images with 8x8 patches (64 tokens): trains in minutes
    # on two CPU cores, used by configs/demo/.
    'vit_demo_patch8_64': _vit(DEMO, img_size=64, patch_size=8, depth=6, embed_dim=192, num_heads=3),
    # the other families at demo size, on the same 8x8 grid of 8x8 patches (PatchConvNet: a 3-conv stem)
    'resmlp_demo_patch8_64': _resmlp(192, 6, 0.1, patch_size=8, img_size=64, paper=DEMO),
    'patchconvnet_demo_64': _patchconvnet(192, 12, 1e-4, patch_size=8, img_size=64, paper=DEMO),
}
