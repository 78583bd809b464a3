# The UperNet ADE20k experiment, scaled down for a CPU: the demo ADE20k (tools/make_demo_data.py),
# the 6-block demo ViT (8x8 patches) trained from scratch on 128x128 crops (the demo images' own scale), a
# 64-channel head. At 64x64 (half scale, 4x cheaper) people, cars and buildings are too few pixels to learn in
# the demo's schedule: every start, scratch or pre-trained, reaches the same mIoU from the stuff classes alone
# (33.1 from the supervised backbone, 33.7 from scratch; 39.8 / 40.7 at 160 iterations). At 128x128 a head
# start shows: 39.0 vs 37.3 (building 12.8 vs 5.4 IoU, person 5.7 vs 1.6; docs/demo-signal.md, third round).
# Same model, data pipeline, metric and schedule shape as configs/upernet_deit3_b.py. Its protocol, upernet_demo
# (below), has a head rule of fixed widths: a 64-channel UperNet and auxiliary head for every backbone, the demo
# ViT's own and any `--backbone` (downstream/head_rule.py), so a board of several backbones compares backbones.
#   python tools/make_demo_data.py --out data/demo --scale small
#   python tools/train.py configs/demo/upernet_demo.py
_base_ = [
    '../_base_/models/upernet_vit.py', '../_base_/datasets/ade20k.py',
    '../_base_/schedules/seg_160k.py', '../_base_/seg_runtime.py',
]
data_root = 'data/demo/ade20k/ADEChallengeData2016'
crop_size = (128, 128)
norm_cfg = dict(type='BN', requires_grad=True)  # SyncBN has no CPU kernel (torchrun on CPU)

# Backbone weights: none (from scratch). The demo pretraining export works too, e.g.
# --checkpoint work_dirs/demo/sup_demo/backbone.pth
model = dict(
    data_preprocessor=dict(size=crop_size, test_cfg=dict(size_divisor=8)),
    backbone=dict(arch='vit_demo_patch8_64', img_size=128, out_indices=[1, 2, 3, 5], drop_path_rate=0.0),
    neck=dict(embed_dim=192, norm_cfg=norm_cfg),
    decode_head=dict(in_channels=[192, 192, 192, 192], channels=64, norm_cfg=norm_cfg),
    auxiliary_head=dict(in_channels=192, channels=64, norm_cfg=norm_cfg),
    test_cfg=dict(crop_size=crop_size, stride=(85, 85)))

# demo images have a short side of 128: keep it (x 0.5-2 for training) and crop 128x128
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='RandomResize', scale=(512, 128), ratio_range=(0.5, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_size=crop_size, cat_max_ratio=0.75),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion'),
    dict(type='PackSegInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=(512, 128), keep_ratio=True),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='PackSegInputs'),
]
img_ratios = [0.75, 1.0, 1.25]
tta_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='TestTimeAug', transforms=[
        [dict(type='Resize', scale=(int(512 * r), int(128 * r)), keep_ratio=True) for r in img_ratios],
        [dict(type='RandomFlip', prob=0., direction='horizontal'),
         dict(type='RandomFlip', prob=1., direction='horizontal')],
        [dict(type='LoadAnnotations', reduce_zero_label=True)],
        [dict(type='PackSegInputs')],
    ]),
]
train_dataloader = dict(
    batch_size=8, num_workers=1,
    dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(
    num_workers=1,
    dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader

max_iters = 40  # the demo pipeline's schedule: 320 crops, where the learning curves are still steep
warmup = 8
# from scratch: a higher LR and milder layer decay than fine-tuning (no pretrained layers to preserve)
optim_wrapper = dict(optimizer=dict(lr=1e-3), paramwise_cfg=dict(layer_decay_rate=0.9))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=False, begin=0, end=warmup),
    dict(type='PolyLR', power=1.0, eta_min=0.0, by_epoch=False, begin=warmup, end=max_iters),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(
    logger=dict(interval=20),  # progress: iteration, ETA, losses every 20 iterations
    checkpoint=dict(interval=max_iters))

randomness = dict(seed=0)

experiment = dict(task='seg', dataset='ade20k-demo', backbone='vit_demo_patch8_64', eval='ss',
                  protocol=dict(name='upernet_demo', settings=[
                      'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size',
                      'crop_size', 'model.test_cfg'], heads=dict(decode_head=64, auxiliary_head=64)))
