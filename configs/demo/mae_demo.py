# Demo of the MAE-lite recipe (configs/pretrain/mae_vit_tiny12h_in1k_400e.py) on the embedded demo ImageNet
# with the demo backbone vit_demo_patch8_64: mask ratio 0.75 (16 of 64 patches visible), decoder 1 x 96 x 3,
# normalised-pixel loss, AdamW (0.9, 0.95), RandomResizedCrop + flip; 20 epochs at AdamW 5e-4 (about 2 CPU-minutes;
# the reconstructions land in work_dirs/demo/mae_demo/vis/). Its backbone.pth is the teacher of dmae_demo.py.
# Shorter or faster made a worse start than random weights for the demo's Mask R-CNN (box AP from it, seed 0:
# 3 epochs at 1.5e-3 10.1, at 5e-4 13.0; 10 epochs at 5e-4 15.9; 20 epochs 20.2; scratch 15.6): at 1.5e-3 the
# weights grow 2.5x in RMS within 120 steps (docs/demo-signal.md, third round).
_base_ = ['../pretrain/mae_vit_tiny12h_in1k_400e.py']

data_root = 'data/demo/imagenet'
img_size = 64
max_epochs = 20
work_dir = 'work_dirs/demo/mae_demo'

model = dict(backbone=dict(arch='vit_demo_patch8_64'))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.2, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(batch_size=100, num_workers=1, pin_memory=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))

optim_wrapper = dict(optimizer=dict(lr=5e-4))  # above MAE's 1.5e-4 x 64/256: 20 epochs, not 400
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))
custom_hooks = [dict(type='BackboneExportHook'), dict(type='MAEVisualizationHook', num_images=8)]

experiment = dict(backbone='vit_demo_patch8_64', pretrain=dict(recipe='mae', epochs=max_epochs))
