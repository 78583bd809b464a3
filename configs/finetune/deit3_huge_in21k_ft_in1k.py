# DeiT III ViT-H/14: the 50-epoch ImageNet-1k fine-tune at 224 of the ImageNet-21k model pre-trained at 126 px
# (configs/pretrain/deit3_huge_in21k_90e.py), as the released deit_3_huge_224_21k_v1.pth was made
# (README_revenge.md, ViT-H fine-tuning on ImageNet-1k): the ViT-B fine-tune (deit3_base_in21k_ft_in1k.py: LAMB
# 3e-4 at batch 2048 = 32 GPUs x 64, 50 epochs, smoothing 0.1, CutMix 1.0, SRC + 3-Augment) with drop path 0.45
# (--drop-path 0.45). Position embeddings are resized 9x9 -> 16x16 at load.
# Expected: 87.2 top-1 / V2 79.2 (thesis Table 6.8; official log, epoch 50: 87.18).
#   python tools/train.py configs/finetune/deit3_huge_in21k_ft_in1k.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_in21k_ft_in1k.py']

checkpoint = 'work_dirs/deit3_huge_in21k_90e/backbone.pth'
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_huge_patch14_224', drop_path_rate=0.45,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_huge_patch14_224')
