# Demo of BEiT's fine-tuning (configs/finetune/beit_three_things_b12_ft_100e.py) on the demo ImageNet (25 classes,
# 64 px) from configs/demo/beit_demo.py's backbone.pth (run that first): layer decay 0.65, Mixup / CutMix,
# RandAugment, label smoothing, random erasing as BEiT; a few epochs at a demo rate.
#   python tools/train.py configs/demo/beit_finetune_demo.py
# The same from random weights (the baseline it should beat): --cfg-options model.backbone.init_cfg=None
_base_ = ['../finetune/beit_three_things_b12_ft_100e.py']

data_root = 'data/demo/imagenet'
img_size = 64
num_classes = 25
max_epochs = 10
work_dir = 'work_dirs/demo/beit_finetune_demo'
checkpoint = 'work_dirs/demo/beit_demo/backbone.pth'

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64',
                  init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    num_classes=num_classes,
    data_preprocessor=dict(num_classes=num_classes))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.25, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False, persistent_workers=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(batch_size=100, num_workers=1, pin_memory=False, persistent_workers=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader
optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64')
