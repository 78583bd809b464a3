# COCO 2017 instances with the multi-scale training of the "3x" Mask R-CNN protocol the PatchConvNet thesis
# compares in (Table 5.6 with Swin / XCiT; facebookresearch/xcit detection/configs/xcit/
# mask_rcnn_xcit_small_12_p16_3x_coco.py): flip, then one of two branches, resize the shorter side to one of
# 480, 512, ..., 800 (longer side <= 1333), or resize-crop-resize; test: shorter side 800. Batches are padded
# to a multiple of 32 by the model's data preprocessor. Everything else (layout, loaders, CocoMetric) is coco_instance_lsj.py's.
_base_ = ['./coco_instance_lsj.py']
ms_scales = [(1333, s) for s in range(480, 801, 32)]
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomFlip', prob=0.5),
    # the two branches of XCiT's / Swin's AutoAugment, one drawn per image: multi-scale resize, or resize to a
    # shorter side of 400 / 500 / 600, crop 384-600 pixels, then the multi-scale resize
    dict(type='RandomChoice', transforms=[
        [dict(type='RandomChoiceResize', scales=ms_scales, keep_ratio=True)],
        [dict(type='RandomChoiceResize', scales=[(1333, 400), (1333, 500), (1333, 600)], keep_ratio=True),
         dict(type='RandomCrop', crop_type='absolute_range', crop_size=(384, 600), allow_negative_crop=True),
         dict(type='RandomChoiceResize', scales=ms_scales, keep_ratio=True)],
    ]),
    dict(type='PackDetInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(1333, 800), keep_ratio=True),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='PackDetInputs', meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor')),
]
train_dataloader = dict(
    batch_size=2,  # per GPU: 8 GPUs x 2 = the protocol's batch of 16
    dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
