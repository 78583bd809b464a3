# DeiT III ViT-L: the 20-epoch fine-tune at 224 of the 800-epoch model trained at 192 px
# (configs/pretrain/deit3_large_in1k_800e.py), as the released deit_3_large_224_1k.pth was made (README_revenge.md,
# ViT-L fine-tuning at 224): the ViT-B fine-tune (deit3_base_in1k_ft224.py: AdamW 1e-5 at batch 512 = 8 GPUs x 64,
# weight decay 0.1, 20 epochs, RandAugment, smoothing 0.1, no repeated aug) with drop path 0.45 (--drop-path 0.45).
# Expected: 84.9 top-1 / ReaL 88.7 / V2 75.1 (thesis Tables 6.7, 6.9; official log, epoch 20: 84.86).
#   python tools/train.py configs/finetune/deit3_large_in1k_ft224.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_in1k_ft224.py']

checkpoint = 'work_dirs/deit3_large_in1k_800e/backbone.pth'
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.45,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_large_patch16_224')
