# Protocol upernet_resmlp224: UperNet on ADE20k at 224 x 224 crops, as thesis §4.3.6 ran ResMLP and DeiT "with the
# same setting" (Touvron, PhD thesis 2022, Table 4.6): training images resized to 896 x 224 (aspect kept, ratio
# range 0.5-2), then cropped to 224 x 224 with flips and photometric distortion; single-scale test at the usual
# resolution with a 224 x 224 sliding window (stride 149: 2/3 of the window). ResMLP's cross-patch layers fix its
# token grid, hence the pre-training crop size.
# The thesis gives neither optimizer nor length ("the x3 schedule"): this protocol takes the suite's 160k-iteration
# UperNet schedule (configs/_base_/schedules/seg_160k.py: AdamW 1e-4, weight decay 0.05, layer-wise lr decay,
# 1,500 warm-up iterations then poly; batch 16) - a decision, named here so that no number under it is set beside
# another protocol's.
# The thesis gives no head width either: the head rule (`heads`, downstream/head_rule.py) is the DeiT III chapter's
# (upernet_xcit160k.py), 'by_width': 512 from width 768, 384 from 384 (ResMLP-S24, DeiT-S), else 192; FCN auxiliary
# head 256 channels. Another decision, for every run of the protocol, --backbone or not.
# A config derived from it sets its backbone, the widths the rule gives it, the layer decay for its depth and its
# checkpoint.
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where the thesis states no precision.
_base_ = ['../models/upernet_vit.py', '../datasets/ade20k.py', '../schedules/seg_160k.py', '../seg_runtime.py']

crop_size = (224, 224)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', reduce_zero_label=True),
    dict(type='RandomResize', scale=(896, 224), ratio_range=(0.5, 2.0), keep_ratio=True),
    dict(type='RandomCrop', crop_size=crop_size, cat_max_ratio=0.75),
    dict(type='RandomFlip', prob=0.5),
    dict(type='PhotoMetricDistortion'),
    dict(type='PackSegInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
model = dict(data_preprocessor=dict(size=crop_size),
             test_cfg=dict(mode='slide', crop_size=crop_size, stride=(149, 149)))

experiment = dict(protocol=dict(name='upernet_resmlp224', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'crop_size',
    'train_dataloader.dataset.pipeline', 'model.test_cfg'], heads=dict(decode_head='by_width', auxiliary_head=256)))
