"""Named backbone variants: one table, architecture only (training recipes set drop path etc.).

Each entry: the model class ('vit' or 'cait'), its constructor arguments, the paper and the official
checkpoint convention the arguments reproduce. ``tools/list_backbones.py`` prints the table.
"""

DEIT = 'DeiT (Touvron et al., ICML 2021)'
DEIT3 = 'DeiT III (Touvron et al., ECCV 2022)'
THREE = 'Three things (Touvron et al., ECCV 2022)'
CAIT = 'CaiT (Touvron et al., ICCV 2021)'
MAE_LITE = 'MAE-lite (Wang et al., ICML 2023)'
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


def _vit(paper, **kwargs):
    return dict(model='vit', paper=paper, kwargs=dict({'img_size': 224}, **kwargs))


def _cait(embed_dim, depth, num_heads, init_values, img_size=224):
    return dict(model='cait', paper=CAIT, kwargs=dict(
        img_size=img_size, patch_size=16, embed_dim=embed_dim, depth=depth, num_heads=num_heads,
        init_values=init_values, depth_token_only=2))


VARIANTS = {
    'deit_tiny_patch16_224': _vit(DEIT, **_DEIT, **_TINY),
    'deit_small_patch16_224': _vit(DEIT, **_DEIT, **_SMALL),
    'deit_base_patch16_224': _vit(DEIT, **_DEIT, **_BASE),
    'deit_tiny_distilled_patch16_224': _vit(DEIT, **_DEIT, **_TINY, distilled=True),
    'deit_small_distilled_patch16_224': _vit(DEIT, **_DEIT, **_SMALL, distilled=True),
    'deit_base_distilled_patch16_224': _vit(DEIT, **_DEIT, **_BASE, distilled=True),

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

    # a DeiT-Tiny-width ViT at half the depth on 64x64 images with 8x8 patches (64 tokens): trains in minutes
    # on two CPU cores, used by configs/demo/.
    'vit_demo_patch8_64': _vit(DEMO, img_size=64, patch_size=8, depth=6, embed_dim=192, num_heads=3),
}
