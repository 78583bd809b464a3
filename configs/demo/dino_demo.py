# Demo of the DINO recipe (configs/_base_/dino_in1k.py) on the small demo ImageNet (2,600 images, 25 classes) with
# the demo backbone vit_demo_patch8_64 cut to depth 2 (CPU time): 2 global crops of 32 px (4x4 patches) and 2 local
# crops of 16 px (multi-crop through one backbone at two sizes), the official augmentations without hue jitter and
# greyscale (the demo's classes are object kinds whose hue is random per image), the official blur radius in pixels
# (at 32 px it blurs away the per-image surface texture, which is never the class: it helped most), the official
# centring, sharpening and schedules, scaled to the demo: a 1024-d output and 256-wide head with BatchNorm (the
# official use_bn_in_head; without it the teacher's outputs collapsed to uniform within the 8 epochs at seed 2), lr
# 2e-3 at batch 64, teacher momentum from 0.9 (0.99 learned nothing in 300 iterations), 8 epochs of 40 iterations, 1
# of warm-up.
# No validation: the test reads the exported teacher's k-NN accuracy against random backbones
# (tests/test_pretrain_dino.py; measurements: docs/recipes.md, DINO).
_base_ = ['../_base_/dino_in1k.py']

data_root = 'data/demo/imagenet'
max_epochs = 8
work_dir = 'work_dirs/demo/dino_demo'
_g = dict(type='RandomResizedCrop', size=32, scale=(0.4, 1.0), interpolation='bicubic')
_l = dict(type='RandomResizedCrop', size=16, scale=(0.05, 0.4), interpolation='bicubic')
_fcj = [dict(type='RandomHorizontalFlip'),
        dict(type='RandomColorJitter', brightness=0.4, contrast=0.4, saturation=0.2, hue=0., prob=0.8),
        dict(type='RandomGrayscale', prob=0.)]
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='MultiView', views=[[_g] + _fcj + [dict(type='GaussianBlur', prob=1.0)],
                                  [_g] + _fcj + [dict(type='GaussianBlur', prob=0.1), dict(type='Solarize', prob=0.2)],
                                  [_l] + _fcj + [dict(type='GaussianBlur', prob=0.5)],
                                  [_l] + _fcj + [dict(type='GaussianBlur', prob=0.5)]]),
    dict(type='PackInputs'),
]
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=32, depth=2),
             out_dim=1024, hidden_dim=256, bottleneck_dim=64, use_bn_in_head=True, momentum_teacher=0.9)
train_dataloader = dict(batch_size=64, num_workers=2, persistent_workers=False, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
optim_wrapper = dict(optimizer=dict(lr=2e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=1, end=max_epochs, convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(task='pretrain', dataset='imagenet', backbone='vit_demo_patch8_64',
                  backbone_overrides=dict(img_size=32, depth=2), pretrain=dict(recipe='dino', epochs=max_epochs, checkpoint=None))
