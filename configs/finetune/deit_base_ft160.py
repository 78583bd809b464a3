# DeiT-B fine-tuned at 160: the fine-tune of configs/finetune/deit_base_ft384.py (30 epochs, AdamW 5e-6, the training
# augmentation kept) at 160 px instead of 384, from the 300-epoch DeiT-B trained at 224 (thesis Table 3.10, "DeiT-B
# trained at 224 and fine-tuned at various sizes"; the thesis gives one schedule for all sizes). Position
# embeddings 14x14 -> 10x10, bicubic, at load; test: resize to 160 / 0.875 and centre crop 160.
# Expected: 79.9 top-1 / ReaL 84.8 / V2 67.6; 609.31 im/s (thesis Table 3.10, one 16GB V100).
#   python tools/train.py configs/finetune/deit_base_ft160.py --amp [--checkpoint PATH]
_base_ = ['./deit_base_ft384.py']

img_size = 160
model = dict(backbone=dict(img_size=img_size))
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
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
experiment = dict(backbone_overrides=dict(img_size=img_size))
