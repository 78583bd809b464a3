# Demo of attention-only resolution fine-tuning (configs/finetune/deit3_base_attn_ft384.py, "Three things" §4):
# the supervised demo backbone (trained at 48 px by deit3_sup_demo.py; run that first) fine-tuned at 64 px
# (position embeddings resized 6x6 -> 8x8 at load) with only the attention qkv/proj weights, pos_embed and
# the head trainable.
#   python tools/train.py configs/demo/deit3_sup_demo.py && python tools/train.py configs/demo/finetune_attn_demo.py
_base_ = ['../finetune/deit3_base_attn_ft384.py']

data_root = 'data/demo/imagenet'
img_size = 64
num_classes = 25
max_epochs = 2
work_dir = 'work_dirs/demo/finetune_attn_demo'
checkpoint = 'work_dirs/demo/deit3_sup_demo/backbone.pth'

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size, drop_path_rate=0.0,
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
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(batch_size=100, num_workers=1, pin_memory=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader

optim_wrapper = dict(optimizer=dict(lr=5e-4))  # the demo backbone is far from converged: a larger rate
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(_delete_=True))
