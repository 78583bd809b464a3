# iNaturalist 2018, MAE-Tiny (MAE-lite ViT-Tiny, 12 heads, MAE 400 epochs), MAE-lite transfer recipe.
# Expected 60.6 top-1 (MAE-lite Table 4; supervised DeiT-Tiny 63.6, MoCo-v3 54.5).
# Epochs: not published (MAE-lite appendix A.4 is missing); 50, as CIFAR-100 (a large set).
_base_ = ['../_base_/transfer_mae_lite.py', '../_base_/datasets/transfer_inat2018.py']

model = dict(
    backbone=dict(init_cfg=dict(type='Pretrained', checkpoint='work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth')),
    num_classes=8142,
    data_preprocessor=dict(num_classes=8142))
train_dataloader = dict(dataset={{_base_.train_dataset}})
val_dataloader = dict(dataset={{_base_.test_dataset}})
test_dataloader = val_dataloader
train_cfg = dict(max_epochs=50)

experiment = dict(dataset='inat2018', backbone='vit_tiny12h_patch16_224')
