# ImageNet-21k (winter 2021, ImageNet-21K-P layout, 10,450 classes: pretrain/imagenet21k.py), DeiT III IN-21k
# augmentation (thesis Table 6.1 "Ours IN-21k pretrain"; README_revenge.md IN-21k commands --src --ThreeAugment
# --color-jitter 0.3 --no-repeated-aug): Simple Random Crop (resize the short side, reflect-pad 4, random crop),
# horizontal flip, 3-Augment, colour jitter 0.3, no repeated augmentation; test: resize + centre crop, crop ratio
# 1.0, on imagenet21k_val. CutMix is batch-level: the model's data_preprocessor. Batch: 64 per GPU x 32 GPUs = 2048.
data_root = 'data/imagenet21k'
num_classes = 10450
img_size = 224
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='TrainCrop', size=img_size, kind='src', padding=4),  # kind=rrc: Table 6.5's first row
    dict(type='RandomHorizontalFlip', prob=0.5),
    dict(type='ThreeAugment'),
    dict(type='ColorJitter', strength=0.3),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=64,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet21k', data_root=data_root, split='imagenet21k_train', num_classes=num_classes,
                 pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=256,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet21k', data_root=data_root, split='imagenet21k_val', num_classes=num_classes,
                 pipeline=test_pipeline, test_mode=True))
val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_dataloader = val_dataloader
test_evaluator = val_evaluator
val_cfg = dict()  # no ImageNet-V2 / ReaL: they score the 1000 ImageNet-1k classes
test_cfg = dict()
