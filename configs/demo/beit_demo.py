# Demo of the BEiT recipe (configs/pretrain/beit_three_things_b12_in1k_300e.py) on the embedded demo ImageNet with
# the demo backbone vit_demo_patch8_64 (LayerScale 0.1, shared relative position bias, no absolute positions): the
# 64 px patch view and the 32 px tokenizer view of one crop, 26 of the 64 patches masked block-wise (40 %, as
# BEiT's 75 of 196; blocks of at least 4 patches), the suite's k-means tokenizer with 64 visual tokens of 4x4
# pixels fitted on 500 training images (fit it first), AdamW 1.5e-3 as BEiT with 1 warm-up epoch.
#   python tools/beit_tokenizer.py configs/demo/beit_demo.py
#   python tools/train.py configs/demo/beit_demo.py && python tools/train.py configs/demo/beit_finetune_demo.py
_base_ = ['../pretrain/beit_three_things_b12_in1k_300e.py']

data_root = 'data/demo/imagenet'
img_size = 64
max_epochs = 10
vocab_size = 64
work_dir = 'work_dirs/demo/beit_demo'

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64'),
             tokenizer=dict(checkpoint=f'work_dirs/demo/beit_tokenizer/kmeans_{vocab_size}.pth',
                            vocab_size=vocab_size, max_images=500))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='ColorJitter', strength=0.4),
    dict(type='RandomHorizontalFlip'),
    dict(type='BEiTMaskedViews', size=img_size, second_size=img_size // 2, patch_size=8, num_masking_patches=26,
         min_num_patches=4),
    dict(type='PackInputs', keys=('beit_mask',)),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False, persistent_workers=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64', pretrain=dict(epochs=max_epochs, tokenizer=f'kmeans-{vocab_size}'))
