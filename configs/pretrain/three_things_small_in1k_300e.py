# "Three things" (Touvron et al., ECCV 2022) baseline ViT-S/16, deit3_small_patch16_224 (12 blocks, width 384, 6
# heads), ImageNet-1k, 300 epochs without LayerScale (§2.2, Table 1): configs/_base_/imagenet_three_things.py
# (A2-based: LAMB, batch 2048, weight decay 0.02, BCE, RandAugment 7/0.5, Mixup 0.2 / CutMix 1.0, repeated
# augmentation, test crop 0.95) with ViT-S's lr 0.004 and stochastic depth 0.05 (§2.2).
# Expected: 79.7 top-1 / 68.5 ImageNet-V2 (Table 1, ViT-S, 300 epochs).
#   python tools/train.py configs/pretrain/three_things_small_in1k_300e.py --amp
_base_ = ['../_base_/imagenet_three_things.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.05,
                           init_values=None))
optim_wrapper = dict(optimizer=dict(lr=0.004))
experiment = dict(backbone='deit3_small_patch16_224',
                  backbone_overrides=dict(drop_path_rate=0.05, init_values=None))
