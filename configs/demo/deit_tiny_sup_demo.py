# Demo of MAE-lite's supervised baseline "DeiT-Tiny" (configs/pretrain/deit_tiny12h_in1k_300e.py: the DeiT recipe
# with MAE-lite's augmentation, AdamW, layer decay 0.85, RandAugment m10, Mixup 0.2) on the embedded demo ImageNet
# with vit_demo_patch8_64, trained at 48 px like deit3_sup_demo.py (the DeiT III recipe, the demo's other
# supervised row). Class-token pooling instead of the paper's average pooling, so that its backbone.pth loads into
# every demo downstream config as the other demo pre-trainings'. Recipe label 'supervised_deit': its leaderboard
# row stands beside deit3_sup_demo.py's 'supervised'.
_base_ = ['../pretrain/deit_tiny12h_in1k_300e.py']

data_root = 'data/demo/imagenet'
img_size = 48
num_classes = 25
max_epochs = 6
work_dir = 'work_dirs/demo/deit_tiny_sup_demo'

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size, global_pool='token'),
    num_classes=num_classes,
    data_preprocessor=dict(num_classes=num_classes))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.25, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m10-mstd0.5-inc1', img_size=img_size),
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
test_dataloader = val_dataloader
val_cfg = dict(extra_sets=[  # ImageNet-V2 and ReaL after the last validation, demo copies
    dict(dataset=dict(type='ImageNetV2', data_root='data/demo/imagenet_v2/imagenetv2-matched-frequency-format-val'),
         evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_v2')),
    dict(dataset=dict(type='ImageNetReaL', data_root='data/demo/imagenet_real', ann_file='real.json'),
         evaluator=dict(type='ReaLAccuracy')),
])

optim_wrapper = dict(optimizer=dict(lr=1e-3))  # 4e-3 x 64/1024 = 2.5e-4 is too slow for a few epochs
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs // 2)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64',
                  backbone_overrides=dict(img_size=img_size, global_pool='token', _delete_=True),
                  pretrain=dict(recipe='supervised_deit', epochs=max_epochs))
