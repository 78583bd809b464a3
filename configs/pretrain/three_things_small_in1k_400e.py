# "Three things" (Touvron et al., ECCV 2022) baseline ViT-S/16, deit3_small_patch16_224 (12 blocks, width 384, 6
# heads), ImageNet-1k, 400 epochs with LayerScale 1e-4 (§2.2, Table 1): configs/_base_/imagenet_three_things_400e.py
# (A2-based: LAMB, batch 2048, weight decay 0.02, BCE, RandAugment 7/0.5, Mixup 0.2 / CutMix 1.0, repeated
# augmentation, test crop 0.95) with ViT-S's lr 0.004 and stochastic depth 0.05 (§2.2).
# Expected: 80.7 top-1 / 69.3 ImageNet-V2 (Table 1, ViT-S, 400 epochs, LayerScale).
#   python tools/train.py configs/pretrain/three_things_small_in1k_400e.py --amp
_base_ = ['../_base_/imagenet_three_things_400e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.05))
optim_wrapper = dict(optimizer=dict(lr=0.004))
experiment = dict(backbone='deit3_small_patch16_224',
                  backbone_overrides=dict(drop_path_rate=0.05))
