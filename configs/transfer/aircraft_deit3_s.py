# FGVC Aircraft (variants), DeiT III ViT-S (ImageNet-1k), full fine-tuning with the DeiT transfer recipe. The
# DeiT papers do not report Aircraft: lr 1e-3 / 10 and 1000 epochs as for the other small fine-grained sets.
_base_ = ['../_base_/transfer_deit.py', '../_base_/datasets/transfer_aircraft.py']

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224',
                  init_cfg=dict(type='Pretrained', checkpoint='work_dirs/deit3_small_in1k_400e/backbone.pth')),
    num_classes=100,
    data_preprocessor=dict(num_classes=100))
train_dataloader = dict(dataset={{_base_.train_dataset}})
val_dataloader = dict(dataset={{_base_.test_dataset}})
test_dataloader = val_dataloader
optim_wrapper = dict(optimizer=dict(lr=1e-4))
train_cfg = dict(max_epochs=1000)

experiment = dict(dataset='aircraft', backbone='deit3_small_patch16_224')
