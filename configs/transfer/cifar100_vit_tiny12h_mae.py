# CIFAR-100, MAE-Tiny (MAE-lite ViT-Tiny, 12 heads, MAE 400 epochs), MAE-lite transfer recipe: 50 epochs,
# 10 warm-up (the official transfer.sh). Expected 78.9 top-1 (MAE-lite Table 4; supervised DeiT-Tiny 85.8,
# MoCo-v3 83.9, distilled MAE-lite 85.0). Other MAE-Tiny checkpoints: --checkpoint PATH.
_base_ = ['../_base_/transfer_mae_lite.py', '../_base_/datasets/transfer_cifar100.py']

model = dict(
    backbone=dict(init_cfg=dict(type='Pretrained', checkpoint='work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth')),
    num_classes=100,
    data_preprocessor=dict(num_classes=100))
train_dataloader = dict(dataset={{_base_.train_dataset}})
val_dataloader = dict(dataset={{_base_.test_dataset}})
test_dataloader = val_dataloader
train_cfg = dict(max_epochs=50)

experiment = dict(dataset='cifar100', backbone='vit_tiny12h_patch16_224')
