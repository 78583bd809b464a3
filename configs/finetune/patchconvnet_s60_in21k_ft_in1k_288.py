# PatchConvNet-S60: the ImageNet-1k fine-tune of the 90-epoch ImageNet-21k model at 288 px, thesis Table 5.2's
# "S60 ... 288" row: patchconvnet_s60_in21k_ft_in1k.py (100 epochs, batch 1024, lr 5e-4, half-cosine, drop path 0.05)
# at 288 (decision there). No position embedding to resize: the trunk's convolutions take any grid.
#   python tools/train.py configs/finetune/patchconvnet_s60_in21k_ft_in1k_288.py --amp [--checkpoint PATH]
_base_ = ['./patchconvnet_s60_in21k_ft_in1k.py']

img_size = 288
model = dict(backbone=dict(img_size=img_size))
train_pipeline = [
    dict(type='LoadImage'), dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'), dict(type='RandAugment', config_str='rand-m7-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs')]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.875),
    dict(type='PackInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
experiment = dict(backbone_overrides=dict(img_size=img_size))
