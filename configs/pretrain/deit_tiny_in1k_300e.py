# DeiT-Ti, supervised on ImageNet-1k for 300 epochs without distillation (Touvron et al., ICML 2021;
# thesis Table 3.3 "no distillation", Table 3.5; README_deit.md training command, batch 4 GPUs x 256): the
# recipe of thesis Table 3.9 (configs/_base_/imagenet_deit_300e.py: AdamW 5e-4 x 1024/512 = 1e-3 at batch
# 1024, weight decay 0.05, cosine, 5 warm-up epochs, label smoothing 0.1, RandAugment 9/0.5, Mixup 0.8,
# CutMix 1.0, random erasing 0.25, repeated augmentation, drop path 0.1, crop ratio 0.875).
# Expected: 72.2 top-1 / 80.1 ReaL / 60.4 V2 (thesis Table 3.5).
#   python tools/train.py configs/pretrain/deit_tiny_in1k_300e.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['../_base_/imagenet_deit_300e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit_tiny_patch16_224'))
experiment = dict(backbone='deit_tiny_patch16_224')
