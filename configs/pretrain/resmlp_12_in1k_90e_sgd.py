# ResMLP-S12 trained "old-fashioned" (thesis Table 4.3, block "Training": 69.2 top-1 / 76.0 ReaL / 56.1 V2, 7.4
# points under the 400-epoch recipe of resmlp_12_in1k.py): "similar to what was employed for ResNet: SGD,
# 90-epochs waterfall schedule, same augmentations up to variations due to library used". The thesis gives no
# other value, so the rest is the classic ResNet recipe (He et al. 2016; torchvision's reference): SGD with
# momentum 0.9, lr 0.1 x batch / 256 (0.4 at batch 1024), weight decay 1e-4, the lr divided by 10 at epochs 30
# and 60, no warm-up; random-resized crop and flip only (no RandAugment, Mixup, CutMix, random erasing, label
# smoothing, repeated augmentation or stochastic depth). Choices, said: "same augmentations" is read as
# ResNet's; the no-weight-decay rule on biases and Affine parameters of the family's recipe is kept.
#   python tools/train.py configs/pretrain/resmlp_12_in1k_90e_sgd.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['./resmlp_12_in1k.py']

max_epochs = 90
model = dict(backbone=dict(drop_path_rate=0.0),
             loss=dict(kind='ce', label_smoothing=0.0),
             data_preprocessor=dict(mixup_alpha=0.0, cutmix_alpha=0.0, erase_prob=0.0))
train_dataloader = dict(
    sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True),
    dataset=dict(pipeline=[
        dict(type='LoadImage'),
        dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
        dict(type='RandomHorizontalFlip'),
        dict(type='PackInputs'),
    ]))
optim_wrapper = dict(optimizer=dict(_delete_=True, type='SGD', lr=0.4, momentum=0.9, weight_decay=1e-4))
param_scheduler = [dict(type='MultiStepLR', by_epoch=True, begin=0, end=max_epochs, milestones=[30, 60], gamma=0.1)]
train_cfg = dict(max_epochs=max_epochs)

experiment = dict(backbone_overrides=dict(drop_path_rate=0.0),
                  pretrain=dict(recipe='supervised:old-fashioned', epochs=max_epochs))
