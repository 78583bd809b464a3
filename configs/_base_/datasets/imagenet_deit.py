# ImageNet-1k, DeiT augmentation (Touvron et al., ICML 2021; thesis Table 3.9): RandomResizedCrop, horizontal
# flip, RandAugment 9/0.5, repeated augmentation x3; test: resize + centre crop with crop ratio 0.875.
# Mixup 0.8 / CutMix 1.0 / random erasing 0.25 are batch-level: the model's data_preprocessor.
# Batch: 128 per GPU x 8 GPUs = 1024.
_base_ = ['./imagenet_extra_sets.py']  # val_cfg: ImageNet-V2 and ReaL after the last validation
data_root = 'data/imagenet'
img_size = 224
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.875),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=128,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,
    sampler=dict(type='RepeatAugSampler', num_repeats=3),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='train', pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=256,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='val', pipeline=test_pipeline, test_mode=True))
# top-1, top-5 and the expected calibration error (15 bins): Accuracy and CalibrationError in one dict, which
# configs override as before (pretrain/robustness_metrics.py)
val_evaluator = dict(type='AccuracyWithCalibration', topk=(1, 5))
test_dataloader = val_dataloader
test_evaluator = val_evaluator
test_cfg = dict()
