# Mask R-CNN + MAE-lite's ViT-Tiny (192 wide, 12 heads), MAE-pretrained, on COCO with MAE-lite's protocol
# (its released `mask_rcnn_vitdet_t_100ep.py`, paper §5.2): ViTDet at 640x640 LSJ, windowed
# attention (14x14) with global blocks 2, 5, 8, 11, no drop path, AdamW 1e-4 with weight decay 0.05 and no
# layer decay, 100 epochs at batch 64.
# MAE-lite reports 39.9 box / 35.4 mask AP with its code (38.9 / 35.1 in the paper, Table 4).
_base_ = [
    './_base_/models/mask_rcnn_vitdet.py', './_base_/datasets/coco_instance_lsj.py',
    './_base_/schedules/det_100e.py', './_base_/det_runtime.py',
]

# Backbone weights: the export of `python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'

image_size = (640, 640)
model = dict(
    data_preprocessor=dict(pad_size_divisor=image_size[0]),  # batches padded to the 640 square
    backbone=dict(
        arch='vit_tiny12h_patch16_224', img_size=640, drop_path_rate=0.0,
        init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(in_channels=192))
optim_wrapper = dict(optimizer=dict(weight_decay=0.05), paramwise_cfg=dict(layer_decay_rate=1.0))

# the LSJ pipelines of the dataset base at 640
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='RandomResize', scale=image_size, ratio_range=(0.1, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_type='absolute_range', crop_size=image_size, recompute_bbox=True,
         allow_negative_crop=True),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1e-2, 1e-2)),
    dict(type='PackDetInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=image_size, keep_ratio=True),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='PackDetInputs', meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor')),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader

experiment = dict(task='det', dataset='coco', backbone='vit_tiny12h_patch16_224', eval='ss')
