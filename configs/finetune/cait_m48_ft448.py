# CaiT-M48↑448Υ: the 448 fine-tuning of the 400-epoch distilled CaiT-M48 (configs/pretrain/cait_m48_in1k_400e.py),
# CaiT Table 5 / thesis Table 3.17 "CaiT-M48↑448Υ": the schedule of ./cait_m36_ft384.py (DeiT's fine-tune at a higher
# resolution) at 448, drop path 0.4 (thesis Table 3.16), LayerScale 1e-6 (the variant). Position embeddings 14x14 ->
# 28x28. Expected: 86.5 / ReaL 90.2 / V2 76.9 (Table 5).
#   python tools/train.py configs/finetune/cait_m48_ft448.py --amp [--checkpoint PATH]
_base_ = ['./cait_m36_ft384.py']

img_size = 448
checkpoint = 'work_dirs/cait_m48_in1k_400e/backbone.pth'
model = dict(backbone=dict(arch='cait_m48_224', drop_path_rate=0.4, img_size=img_size,
                           init_cfg=dict(checkpoint=checkpoint)))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
experiment = dict(backbone='cait_m48_224', backbone_overrides=dict(drop_path_rate=0.4, img_size=img_size))
