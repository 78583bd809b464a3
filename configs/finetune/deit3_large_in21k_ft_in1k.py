# DeiT III ViT-L: the 50-epoch ImageNet-1k fine-tune of the ImageNet-21k model
# (configs/pretrain/deit3_large_in21k_240e.py), as the released deit_3_large_224_21k.pth was made (README_revenge.md,
# ViT-L fine-tuning on ImageNet-1k): the ViT-B fine-tune (deit3_base_in21k_ft_in1k.py: LAMB 3e-4 at batch 2048 =
# 32 GPUs x 64, 50 epochs, smoothing 0.1, CutMix 1.0, SRC + 3-Augment) with drop path 0.4 (--drop-path 0.4).
# Expected: 87.0 top-1 / ReaL 90.0 / V2 78.6 (thesis Tables 6.5, 6.8, 6.9; official log, epoch 50: 86.98).
#   python tools/train.py configs/finetune/deit3_large_in21k_ft_in1k.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_in21k_ft_in1k.py']

checkpoint = 'work_dirs/deit3_large_in21k_240e/backbone.pth'
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.4,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_large_patch16_224')
