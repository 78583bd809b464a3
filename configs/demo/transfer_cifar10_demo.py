# Demo of classification transfer (configs/transfer/cifar10_deit3_s.py, the DeiT recipe) on the embedded demo
# CIFAR-10 (10 classes, 5,000 / 1,000 images in the real pickle format; `python tools/make_demo_data.py --out
# data/demo`) with the demo backbone vit_demo_patch8_64 run at CIFAR's own 32x32 (4x4 patches of 8 pixels).
# It trains on the first 200 training images only (12-30 per class, shuffled as the real batches are): with all
# 5,000 every initialisation saturates at 98-99 %, and with 500 the pre-trained ones still reach 94-99 % (scratch
# 76-85); with few labels a head start matters, as Flowers-102's 10 images per class make it matter for real. On
# 200, seeds 0-2 (the 3-seed demo's backbones): scratch 46-50 %, supervised 76-85 %, MAE 62-69 %, distilled MAE
# 60-67 % (docs/demo-signal.md, fourth and fifth rounds). From scratch, hence a training-size learning rate and lighter
# augmentation (no RandAugment / erasing, weaker Mixup/CutMix), 4 epochs. This is the demo pipeline's schedule.
# From the demo pre-training: --checkpoint work_dirs/demo/sup_demo/backbone.pth
_base_ = ['../transfer/cifar10_deit3_s.py']

data_root = 'data/demo/cifar10'
img_size = 32
max_epochs = 4
warmup = 0.5  # epochs
work_dir = 'work_dirs/demo/transfer_cifar10_demo'

model = dict(
    # average pooling (fc_norm), as the demo's supervised pre-training and MAE-lite's transfers pool: the loader
    # refuses a pooled checkpoint for a class-token model, and takes class-token and MAE checkpoints for this one
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size, global_pool='avg',
                  drop_path_rate=0.0, init_cfg=None),
    loss=dict(label_smoothing=0.0),
    data_preprocessor=dict(mixup_alpha=0.2, cutmix_alpha=0.0, erase_prob=0.0))
train_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.5, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=32, num_workers=1, persistent_workers=True, pin_memory=False,
    sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True),
    dataset=dict(data_root=data_root, pipeline=train_pipeline, indices=200))
val_dataloader = dict(
    batch_size=100, num_workers=1, persistent_workers=False, pin_memory=False,
    dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.01, by_epoch=True, begin=0, end=warmup, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min_ratio=0.01, by_epoch=True, begin=warmup, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs)
auto_scale_lr = dict(base_batch_size=32)
default_hooks = dict(logger=dict(interval=20), checkpoint=dict(interval=max_epochs, max_keep_ckpts=1))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(img_size=img_size, global_pool='avg'))
