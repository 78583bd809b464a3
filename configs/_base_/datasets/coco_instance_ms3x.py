# COCO 2017 instances with the multi-scale training of the "3x" Mask R-CNN protocol the PatchConvNet thesis
# compares in (Table 5.6 with Swin / XCiT): flip, resize the shorter side to one of 480, 512, ..., 800
# (longer side <= 1333); test: shorter side 800. Batches are padded to a multiple of 32 by the model's
# data preprocessor. Everything else (layout, loaders, CocoMetric) is coco_instance_lsj.py's.
_base_ = ['./coco_instance_lsj.py']
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='RandomChoiceResize', scales=[(1333, s) for s in range(480, 801, 32)], keep_ratio=True),
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
