# Demo of the MoCo-v3 recipe (configs/pretrain/mocov3_vit_tiny12h_in1k_400e.py) on the embedded demo ImageNet with
# the demo backbone vit_demo_patch8_64: two asymmetric views (colour jitter, blur p 1.0 / 0.1, grayscale, flip,
# solarisation p 0 / 0.2), momentum 0.99 cosine to 1, temperature 0.2, AdamW with weight decay 0.1. Scaled to the
# demo: crops of 48 px (36 patches, as deit3_sup_demo.py) from scale 0.2, MLPs 1024 wide instead of 4096 (the
# encoder is 192 wide), a higher learning rate for a few epochs. About 2x the supervised demo's time (two views,
# plus the momentum encoder's forward pass); no validation (the backbone.pth is evaluated downstream).
_base_ = ['../pretrain/mocov3_vit_tiny12h_in1k_400e.py']

data_root = 'data/demo/imagenet'
img_size = 48
max_epochs = 6
work_dir = 'work_dirs/demo/mocov3_demo'

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size),
             mlp_dim=1024)
_view = [
    dict(type='RandomResizedCrop', size=img_size, scale=(0.2, 1.0), interpolation='bilinear'),
    dict(type='RandomColorJitter', brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1, prob=0.8),
]
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='MultiView', views=[
        _view + [dict(type='GaussianBlur', prob=1.0), dict(type='RandomGrayscale', prob=0.2),
                 dict(type='RandomHorizontalFlip')],
        _view + [dict(type='GaussianBlur', prob=0.1), dict(type='RandomGrayscale', prob=0.2),
                 dict(type='RandomHorizontalFlip'), dict(type='Solarize', prob=0.2)],
    ]),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))

optim_wrapper = dict(optimizer=dict(lr=1e-3))  # above 6e-4 x 64/1024: a few epochs, not 400
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(img_size=img_size),
                  pretrain=dict(epochs=max_epochs))
