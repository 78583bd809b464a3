# DeiT III ViT-S: the 50-epoch ImageNet-1k fine-tune of the ImageNet-21k model
# (configs/pretrain/deit3_small_in21k_240e.py), as the released deit_3_small_224_21k.pth was made (README_revenge.md,
# ViT-S fine-tuning on ImageNet-1k): the ViT-B fine-tune (deit3_base_in21k_ft_in1k.py: LAMB 3e-4 at batch 2048,
# 50 epochs, smoothing 0.1, CutMix 1.0, SRC + 3-Augment) with drop path 0.05 (--drop-path 0.05) and 128 images
# per GPU on 16 GPUs.
# Expected: 83.1 top-1 / V2 73.8 (thesis Tables 6.5, 6.8; official log, epoch 50: 83.07).
#   python tools/train.py configs/finetune/deit3_small_in21k_ft_in1k.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_in21k_ft_in1k.py']

checkpoint = 'work_dirs/deit3_small_in21k_240e/backbone.pth'
train_dataloader = dict(batch_size=128)  # per GPU, x 16 GPUs = 2048
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.05,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_small_patch16_224')
