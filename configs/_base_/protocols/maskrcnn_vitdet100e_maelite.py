# Protocol maskrcnn_vitdet100e_maelite: ViTDet's protocol (maskrcnn_vitdet100e.py) as MAE-lite runs it for its
# ViT-Tiny (Wang et al., ICML 2023, §5.2; its released projects/eval_tools/det/mask_rcnn_vitdet_t_100ep.py, the
# MAE-lite Table 4 / 5 COCO columns): 640 x 640 large-scale jitter, the global blocks' biases for the 40 x 40 grid,
# AdamW 1e-4 with weight decay 0.05 and no layer-wise decay; 100 epochs at batch 64, activation checkpointing and
# AMP (memory and speed only: `with_cp`, `--amp`). Its milestones are int(max_iter x 24/27) and
# int(max_iter x 26/27): 163,888 and 177,546 (ViTDet's file writes 163,889). Head rule: ViTDet's (256-channel
# pyramid and heads, 1024-wide box fc), which MAE-lite's Tiny config keeps.
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where MAE-lite's ViTDet config sets
# `train.amp.enabled = True`.
_base_ = ['./maskrcnn_vitdet100e.py']

image_size = (640, 640)
model = dict(data_preprocessor=dict(pad_size_divisor=image_size[0]),  # batches padded to the 640 square
             backbone=dict(img_size=image_size[0]))
optim_wrapper = dict(optimizer=dict(weight_decay=0.05), paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=250),
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=184375, milestones=[163888, 177546], gamma=0.1),
]

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

experiment = dict(protocol=dict(name='maskrcnn_vitdet100e_maelite'))
