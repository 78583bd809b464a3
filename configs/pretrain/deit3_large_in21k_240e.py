# DeiT III ViT-L, supervised on ImageNet-21k for 240 epochs at 224, as the released deit_3_large_224_21k.pth was
# pre-trained (README_revenge.md, ViT-L ImageNet-21k command): the ViT-B recipe (deit3_base_in21k_240e.py: LAMB
# 1e-3 at batch 2048 = 32 GPUs x 64, CE + smoothing 0.1, CutMix 1.0, SRC + 3-Augment) with drop path 0.3
# (--drop-path 0.3, as thesis Table 6.14 gives for 90 epochs).
# Expected on ImageNet-21k val: 57.4 top-1 (official log, epoch 240).
# After configs/finetune/deit3_large_in21k_ft_in1k.py: 87.0 top-1 / ReaL 90.0 / V2 78.6 (thesis Tables 6.5, 6.8, 6.9).
#   python tools/train.py configs/pretrain/deit3_large_in21k_240e.py --amp
_base_ = ['./deit3_base_in21k_240e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.3))
experiment = dict(backbone='deit3_large_patch16_224', backbone_overrides=dict(drop_path_rate=0.3))
