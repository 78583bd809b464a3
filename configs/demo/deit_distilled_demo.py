# Demo of DeiT's hard distillation through the distillation token (configs/pretrain/deit_tiny_distilled_in1k.py: the
# DeiT recipe, thesis Table 3.9) with a timm convnet teacher, as thesis Table 3.2's RegNetYs: timm's smallest
# RegNetY (regnety_002) at the demo's 25 classes, loaded from the file given with --teacher (nothing is
# downloaded; a file whose classifier has other classes is refused). The student is vit_demo_patch8_64 with a
# distillation token, at 32 px; evaluated by the mean of the two heads' logits (model.distill_inference, or
# 'class_head' / 'distillation_head': one head, Table 3.3). Its per_image.npz holds each image's predicted classes:
#   python tools/train.py configs/demo/deit_distilled_demo.py --teacher work_dirs/demo/regnety_002.pth
#   python tools/analyze.py disagreement --runs deit=work_dirs/demo/deit_distilled_demo ... --out work_dirs/analysis
# (tests/test_deit_distillation_demo.py writes a teacher file and runs it).
_base_ = ['../pretrain/deit_tiny_distilled_in1k.py']

data_root = 'data/demo/imagenet'
img_size = 32
num_classes = 25
max_epochs = 4
work_dir = 'work_dirs/demo/deit_distilled_demo'

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size, distilled=True),
    num_classes=num_classes,
    data_preprocessor=dict(num_classes=num_classes),
    distillation=dict(teacher=dict(type='vitbench.TimmBackbone', arch='timm:regnety_002',
                                   checkpoint='work_dirs/demo/regnety_002.pth')))
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.25, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False, sampler=dict(num_repeats=1),
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(batch_size=100, num_workers=1, pin_memory=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader
val_cfg = dict(extra_sets=[])

optim_wrapper = dict(optimizer=dict(lr=1e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs, convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64',
                  backbone_overrides=dict(img_size=img_size, distilled=True, _delete_=True),
                  pretrain=dict(epochs=max_epochs))
