# "Three things" (Touvron et al., ECCV 2022) parallel ViT-S18x2, deit3_small_patch16_18x2 (18 layers of 2
# parallel (MHSA, FFN) branches), ImageNet-1k, 300 epochs without LayerScale (§2.2, §3, Table 2):
# configs/_base_/imagenet_three_things.py (A2-based: LAMB, batch 2048, weight decay 0.02, BCE, RandAugment
# 7/0.5, Mixup 0.2 / CutMix 1.0, repeated augmentation, test crop 0.95) with ViT-S's lr 0.004 and stochastic
# depth 0.05 (§2.2 sets them per width; the paper gives no other rate for the deeper 18x2 models).
# Expected: the paper shows ViT-S36 parallel only in Fig. 1 (no printed number); the nearest printed rows are
# Table 3's S48x1 82.3 / S24x2 82.6 top-1 (300 epochs without LayerScale) and Table 1's ViT-S (12 blocks) 79.7 at 300
# epochs / 80.7 at 400 + LayerScale.
#   python tools/train.py configs/pretrain/three_things_small_18x2_in1k_300e.py --amp
_base_ = ['../_base_/imagenet_three_things.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_18x2', drop_path_rate=0.05,
                           init_values=None))
optim_wrapper = dict(optimizer=dict(lr=0.004))
experiment = dict(backbone='deit3_small_patch16_18x2',
                  backbone_overrides=dict(drop_path_rate=0.05, init_values=None))
