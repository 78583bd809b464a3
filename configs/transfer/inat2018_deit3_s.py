# iNaturalist 2018, DeiT III ViT-S (ImageNet-1k), full fine-tuning with the DeiT transfer recipe: lr 1e-3 / 10,
# 360 epochs. Expected 67.1 top-1 (DeiT III thesis Table 6.11; "Three things" Table 6: full 68.0, attention 60.6).
_base_ = ['../_base_/transfer_deit.py', '../_base_/datasets/transfer_inat2018.py']

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224',
                  init_cfg=dict(type='Pretrained', checkpoint='work_dirs/deit3_small_in1k_400e/backbone.pth')),
    num_classes=8142,
    data_preprocessor=dict(num_classes=8142))
train_dataloader = dict(dataset={{_base_.train_dataset}})
val_dataloader = dict(dataset={{_base_.test_dataset}})
test_dataloader = val_dataloader
optim_wrapper = dict(optimizer=dict(lr=1e-4))
train_cfg = dict(max_epochs=360)

experiment = dict(dataset='inat2018', backbone='deit3_small_patch16_224')
