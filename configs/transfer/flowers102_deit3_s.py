# Flowers-102, DeiT III ViT-S (ImageNet-1k), full fine-tuning with the DeiT transfer recipe: lr 1e-3 / 10,
# 1000 epochs. Expected 96.4 top-1 (DeiT III thesis Table 6.11; "Three things" Table 6: full 96.8, attention 96.9,
# see flowers102_deit3_s_attn.py).
_base_ = ['../_base_/transfer_deit.py', '../_base_/datasets/transfer_flowers102.py']

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224',
                  init_cfg=dict(type='Pretrained', checkpoint='work_dirs/deit3_small_in1k_400e/backbone.pth')),
    num_classes=102,
    data_preprocessor=dict(num_classes=102))
train_dataloader = dict(dataset={{_base_.train_dataset}})
val_dataloader = dict(dataset={{_base_.test_dataset}})
test_dataloader = val_dataloader
optim_wrapper = dict(optimizer=dict(lr=1e-4))
train_cfg = dict(max_epochs=1000)

experiment = dict(dataset='flowers102', backbone='deit3_small_patch16_224')
