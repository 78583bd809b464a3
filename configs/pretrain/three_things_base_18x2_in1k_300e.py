# "Three things" (Touvron et al., ECCV 2022) parallel ViT-B18x2, deit3_base_patch16_18x2 (18 layers of 2
# parallel (MHSA, FFN) branches), ImageNet-1k, 300 epochs without LayerScale (§2.2, §3, Table 2):
# configs/_base_/imagenet_three_things.py (A2-based: LAMB, batch 2048, weight decay 0.02, BCE, RandAugment
# 7/0.5, Mixup 0.2 / CutMix 1.0, repeated augmentation, test crop 0.95) with ViT-B's lr 0.003 and stochastic
# depth 0.1 (§2.2 sets them per width; the paper gives no other rate for the deeper 18x2 models).
# Expected: 83.3 top-1 / 72.4 ImageNet-V2 (Table 2, parallel ViT-B18x2, 300 epochs, no LayerScale).
#   python tools/train.py configs/pretrain/three_things_base_18x2_in1k_300e.py --amp
_base_ = ['../_base_/imagenet_three_things.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_base_patch16_18x2', drop_path_rate=0.1,
                           init_values=None))
optim_wrapper = dict(optimizer=dict(lr=0.003))
experiment = dict(backbone='deit3_base_patch16_18x2',
                  backbone_overrides=dict(drop_path_rate=0.1, init_values=None))
