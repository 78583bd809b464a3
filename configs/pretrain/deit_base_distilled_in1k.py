# DeiT-B with a distillation token, hard distillation from a RegNetY-16GF (Touvron et al., ICML 2021; thesis
# Tables 3.3, 3.5, 3.9): 300 epochs, AdamW 5e-4 x 1024/512 = 1e-3 at batch 1024 (8 GPUs x 128), weight decay
# 0.05, cosine, 5 warmup epochs, label smoothing 0.1 (true-label head), RandAugment 9/0.5, Mixup 0.8,
# CutMix 1.0, random erasing 0.25, drop path 0.1, repeated augmentation. The class head learns the labels,
# the distillation head the teacher's argmax; evaluation averages both heads.
# Expected: 83.4 top-1 (DeiT-B distilled, 300 epochs).
# The teacher: the official DeiT RegNetY-16GF (82.9 top-1), a timm 'regnety_160' state dict
# (https://dl.fbaipublicfiles.com/deit/regnety_160-a5fe301d.pth) saved under checkpoints/.
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 300
model = dict(
    type='ImageClassifier',
    backbone=dict(arch='deit_base_distilled_patch16_224', drop_path_rate=0.1),
    num_classes=num_classes,
    loss=dict(kind='ce', label_smoothing=0.1),
    distillation=dict(
        teacher=dict(source='timm', name='regnety_160', checkpoint='checkpoints/regnety_160-a5fe301d.pth'),
        kind='hard', alpha=0.5),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.8,
                           cutmix_alpha=1.0, erase_prob=0.25))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: timm's no-weight-decay rule only
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=1024)

experiment = dict(task='pretrain', dataset='imagenet', backbone='deit_base_distilled_patch16_224',
                  backbone_overrides=dict(drop_path_rate=0.1),
                  pretrain=dict(recipe='supervised_distilled', epochs=max_epochs, checkpoint=None))
