# ImageNet-1k, DeiT III augmentation (Touvron et al., ECCV 2022, Table 1 "Ours IN-1k"): RandomResizedCrop,
# horizontal flip, 3-Augment (grayscale | solarization | Gaussian blur), colour jitter 0.3, repeated
# augmentation x3; test: resize + centre crop with crop ratio 1.0. Mixup 0.8 / CutMix 1.0 are batch-level: the
# model's data_preprocessor. Batch: 256 per GPU x 8 GPUs = 2048.
# The thesis' ablations (Tables 6.2-6.5) switch steps of train_pipeline by position with --cfg-options
# train_dataloader.dataset.pipeline.N.KEY=VALUE (docs/recipes.md, "DeiT III ablation switches"):
#   1 crop        kind=rrc | src (Simple Random Crop)
#   2 flip        prob=0.0: no flip
#   3 policy      ops=[grayscale, solarization, gaussian_blur] (any subset; [] none), or type=RandAugment
#                 (config_str=rand-m9-mstd0.5-inc1) | AutoAugment (config_str=original) | TrivialAugment
#   4 colour      strength=0.0: no colour jitter
# tests/test_deit3_ablations.py keeps these positions.
_base_ = ['./imagenet_extra_sets.py']  # val_cfg: ImageNet-V2 and ReaL after the last validation
data_root = 'data/imagenet'
img_size = 224
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='TrainCrop', size=img_size, kind='rrc', scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip', prob=0.5),
    dict(type='ThreeAugment'),  # the three operations; no key of its own, so that type= switches the policy
    dict(type='ColorJitter', strength=0.3),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=256,
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
