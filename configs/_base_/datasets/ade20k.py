# ADE20k (SceneParsing: 20k train / 2k val images, 150 classes) with mmseg's loader and pipelines,
# 512x512 crops as BEiT / MAE / XCiT. Layout: see downstream/seg/datasets.py (a wrong data_root shows it).
dataset_type = 'vitbench.ADE20KDataset'  # mmseg's ADE20KDataset + the layout check
data_root = 'data/ade/ADEChallengeData2016'
crop_size = (512, 512)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='RandomResize', scale=(2048, 512), ratio_range=(0.5, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_size=crop_size, cat_max_ratio=0.75),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion'),
    dict(type='PackSegInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(2048, 512), keep_ratio=True),
    # after Resize: the metric compares with the label map at its original size
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='PackSegInputs'),
]
# Multi-scale + flip test (tools/test.py --tta): the (2048, 512) scale times each ratio, as Swin / BEiT.
img_ratios = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
tta_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='TestTimeAug', transforms=[
        [dict(type='Resize', scale=(int(2048 * r), int(512 * r)), keep_ratio=True) for r in img_ratios],
        [dict(type='RandomFlip', prob=0., direction='horizontal'),
         dict(type='RandomFlip', prob=1., direction='horizontal')],
        [dict(type='LoadAnnotations', reduce_zero_label=True)],
        [dict(type='PackSegInputs')],
    ]),
]
train_dataloader = dict(
    batch_size=2,  # per GPU: 8 GPUs x 2 = the protocol's batch of 16
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='InfiniteSampler', shuffle=True),
    dataset=dict(type=dataset_type, data_root=data_root, pipeline=train_pipeline,
                 data_prefix=dict(img_path='images/training', seg_map_path='annotations/training')))
val_dataloader = dict(
    batch_size=1,  # images of different sizes
    num_workers=4,
    persistent_workers=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(type=dataset_type, data_root=data_root, pipeline=test_pipeline,
                 data_prefix=dict(img_path='images/validation', seg_map_path='annotations/validation')))
test_dataloader = val_dataloader
# mmseg's IoUMetric, plus the IoU of each class (IoU.<class>) for result.json
val_evaluator = dict(type='vitbench.PerClassIoUMetric', iou_metrics=['mIoU'])
test_evaluator = val_evaluator
