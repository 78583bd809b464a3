# COCO 2017 instances (118k train / 5k val images, 80 classes) with mmdet's loader, large-scale jitter as
# ViTDet: flip, resize to 0.1-2.0x of image_size (longer side), crop image_size. Test: resize the longer side
# to image_size. The model's data_preprocessor pads both to the image_size square (pad_size_divisor).
# Box and mask AP by mmdet's CocoMetric (vitbench's: it also keeps the per-image matches).
# Layout: data_root/{train2017,val2017}/*.jpg, data_root/annotations/instances_{train,val}2017.json.
dataset_type = 'vitbench.CocoDataset'  # mmdet's, with a clear error for a wrong data_root
data_root = 'data/coco/'
image_size = (1024, 1024)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='RandomResize', scale=image_size, ratio_range=(0.1, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_type='absolute_range', crop_size=image_size, recompute_bbox=True,
         allow_negative_crop=True),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1e-2, 1e-2)),  # boxes the crop cut to nothing
    dict(type='PackDetInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=image_size, keep_ratio=True),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='PackDetInputs', meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor')),
]
train_dataloader = dict(
    batch_size=4,  # per GPU: 16 GPUs x 4 = the protocol's batch of 64 (see auto_scale_lr for other sizes)
    num_workers=8,
    persistent_workers=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/instances_train2017.json',
        data_prefix=dict(img='train2017/'),
        filter_cfg=dict(filter_empty_gt=True, min_size=32),
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=1,
    num_workers=2,
    persistent_workers=True,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/instances_val2017.json',
        data_prefix=dict(img='val2017/'),
        test_mode=True,
        pipeline=test_pipeline))
test_dataloader = val_dataloader
# box and mask AP, AP50, AP75, APs/m/l on the original annotations (crowds and mask areas included); mmdet's
# CocoMetric that also leaves the per-image matches behind box and mask AP (per_image.npz)
val_evaluator = dict(
    type='vitbench.CocoMetric', ann_file=data_root + 'annotations/instances_val2017.json', metric=['bbox', 'segm'])
test_evaluator = val_evaluator
