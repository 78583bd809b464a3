# DeiT III ViT-H/14: the 20-epoch fine-tune at 224 of the 800-epoch model trained at 154 px
# (configs/pretrain/deit3_huge_in1k_800e.py), as the released deit_3_huge_224_1k.pth was made (README_revenge.md,
# ViT-H fine-tuning at 224): the ViT-B fine-tune (deit3_base_in1k_ft224.py: AdamW 1e-5 at batch 512, weight decay
# 0.1, 20 epochs, RandAugment, smoothing 0.1, no repeated aug) with drop path 0.55 (--drop-path 0.55) and 32
# images per GPU on 2 nodes x 8 GPUs (--batch 32 --nodes 2). Position embeddings: 11x11 -> 16x16 at load.
# Expected: 85.2 top-1 / ReaL 89.2 / V2 75.9 (thesis Tables 6.6, 6.7; official log, epoch 20: 85.22).
#   python tools/train.py configs/finetune/deit3_huge_in1k_ft224.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_in1k_ft224.py']

checkpoint = 'work_dirs/deit3_huge_in1k_800e/backbone.pth'
train_dataloader = dict(batch_size=32)  # per GPU, x 16 GPUs = 512
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_huge_patch14_224', drop_path_rate=0.55,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_huge_patch14_224')
