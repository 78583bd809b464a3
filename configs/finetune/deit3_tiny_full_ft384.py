# DeiT III ViT-T: fine-tuning at 384 of the 400-epoch ImageNet-1k model (configs/pretrain/deit3_tiny_in1k_400e.py; no
# longer ViT-T pre-training is published): the ViT-B 384 fine-tune (deit3_base_full_ft384.py: thesis §6.3.6, AdamW
# 1e-5 fixed after a 5-epoch warm-up, batch 512, weight decay 0.1, 20 epochs, RandAugment, smoothing 0.1, no repeated
# aug) at 64 images per GPU on 8 GPUs, as the ViT-S one.
# Drop path 0.0, chosen here: README_revenge.md gives 384 commands for ViT-S/B/L only (drop path 0.0 / 0.15 / 0.4,
# i.e. about the 400-epoch values of thesis Table 6.14: 0.0 / 0.1 / 0.4), and ViT-T has 0.0 there, as ViT-S.
# Expected: no ViT-T↑384 number is published (thesis Table 6.7 and "Three things" Table 5 stop at ViT-S).
#   python tools/train.py configs/finetune/deit3_tiny_full_ft384.py --amp [--checkpoint PATH]
_base_ = ['./deit3_base_full_ft384.py']

checkpoint = 'work_dirs/deit3_tiny_in1k_400e/backbone.pth'
train_dataloader = dict(batch_size=64)  # per GPU, x 8 GPUs = 512
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_tiny_patch16_224', drop_path_rate=0.0,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_tiny_patch16_224')
