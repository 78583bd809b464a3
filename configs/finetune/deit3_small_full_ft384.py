# DeiT III ViT-S: fine-tuning at 384 of the 800-epoch ImageNet-1k model (configs/pretrain/deit3_small_in1k_800e.py),
# as the released deit_3_small_384_1k.pth was made (README_revenge.md, ViT-S fine-tuning at 384; thesis §6.3.6): the
# ViT-B 384 fine-tune (deit3_base_full_ft384.py: AdamW 1e-5, batch 512, weight decay 0.1, 20 epochs, RandAugment,
# smoothing 0.1, no repeated aug) with drop path 0.0 (--drop-path 0.0) and 64 images per GPU on 8 GPUs.
# Expected: 83.4 top-1 / V2 73.1 (thesis Table 6.7; official log, epoch 20: 83.42).
#   python tools/train.py configs/finetune/deit3_small_full_ft384.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_full_ft384.py']

checkpoint = 'work_dirs/deit3_small_in1k_800e/backbone.pth'
train_dataloader = dict(batch_size=64)  # per GPU, x 8 GPUs = 512
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.0,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_small_patch16_224')
