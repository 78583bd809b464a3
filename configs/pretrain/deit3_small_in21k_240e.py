# DeiT III ViT-S, supervised on ImageNet-21k for 240 epochs at 224, as the released deit_3_small_224_21k.pth was
# pre-trained (README_revenge.md, ViT-S ImageNet-21k command): the ViT-B recipe (deit3_base_in21k_240e.py: LAMB
# 1e-3 at batch 2048, CE + smoothing 0.1, CutMix 1.0, SRC + 3-Augment) with drop path 0.05 (--drop-path 0.05)
# and 128 images per GPU on 16 GPUs (--batch 128 --nodes 2).
# Expected on ImageNet-21k val: 54.1 top-1 (official log, epoch 240).
# After configs/finetune/deit3_small_in21k_ft_in1k.py: 83.1 top-1 / V2 73.8 (thesis Tables 6.5, 6.8).
#   python tools/train.py configs/pretrain/deit3_small_in21k_240e.py --amp
_base_ = ['./deit3_base_in21k_240e.py']

train_dataloader = dict(batch_size=128)  # per GPU, x 16 GPUs
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.05))
experiment = dict(backbone='deit3_small_patch16_224', backbone_overrides=dict(drop_path_rate=0.05))
