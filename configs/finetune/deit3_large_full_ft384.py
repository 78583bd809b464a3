# DeiT III ViT-L: fine-tuning at 384 of the 800-epoch ImageNet-1k model (configs/pretrain/deit3_large_in1k_800e.py),
# as the released deit_3_large_384_1k.pth was made (README_revenge.md, ViT-L fine-tuning at 384; thesis §6.3.6): the
# ViT-B 384 fine-tune (deit3_base_full_ft384.py: AdamW 1e-5, batch 512, weight decay 0.1, 20 epochs, RandAugment,
# smoothing 0.1, no repeated aug) with drop path 0.4 (--drop-path 0.4) and 16 images per GPU on 4 nodes x 8 GPUs.
# Expected: 85.8 top-1 / V2 76.7 (thesis Table 6.7; official log, epoch 20: 85.81).
#   python tools/train.py configs/finetune/deit3_large_full_ft384.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_full_ft384.py']

checkpoint = 'work_dirs/deit3_large_in1k_800e/backbone.pth'
train_dataloader = dict(batch_size=16)  # per GPU, x 32 GPUs = 512
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.4,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_large_patch16_224')
