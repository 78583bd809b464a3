# ImageNet-1k for masked-autoencoder pre-training (He et al., 2022): RandomResizedCrop (scale 0.2-1) and a
# horizontal flip, nothing else. The validation split gives the reconstruction loss and the PNG grids of
# MAEVisualizationHook. Batch: 512 per GPU x 8 GPUs = 4096.
data_root = 'data/imagenet'
img_size = 224
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.2, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.875),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=512,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
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
val_evaluator = dict(type='ReconstructionLoss')
val_cfg = dict()
test_dataloader = val_dataloader
test_evaluator = val_evaluator
test_cfg = dict()
