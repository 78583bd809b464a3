# ResNet-50 with the A2 procedure of "ResNet strikes back" (Wightman, Touvron, Jégou 2021, Table 1; thesis
# Table 6.1 column "Wightman RSB" and §6.3.4): the recipe of the thesis' seed study (Figures 6.7-6.10: 100 seeds,
# ImageNet-val 79.72 ± 0.10, seed 0 79.85). 300 epochs at 224, LAMB 5e-3 at batch 2048, weight decay 0.02, cosine
# after 5 warm-up epochs, BCE on targets binarised above 0.2, Mixup 0.1 / CutMix 1.0, RandomResizedCrop + flip +
# RandAugment rand-m7-mstd0.5-inc1, repeated augmentation x3, drop path 0.05, no label smoothing, no EMA; test
# crop ratio 0.95. ResNet-50 is timm's (`timm:resnet50`, built untrained).
#   python tools/train.py configs/pretrain/rsb_a2_resnet50_in1k_300e.py --amp
#   the seed study: python tools/pipeline.py --table "thesis:Figure 6.7" --seeds 1-100 (docs/recipes.md)
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit3.py']

num_classes = 1000
max_epochs = 300
img_size = 224
model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.TimmBackbone', arch='timm:resnet50', drop_path_rate=0.05),
    num_classes=num_classes,
    loss=dict(kind='bce', binarize_threshold=0.2),  # RSB's --bce-target-thresh 0.2
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.1,
                           cutmix_alpha=1.0))
# the DeiT III ImageNet pipeline's positions (configs/_base_/datasets/imagenet_deit3.py), RandAugment as the policy
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='TrainCrop', size=img_size, kind='rrc', scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip', prob=0.5),
    dict(type='RandAugment', config_str='rand-m7-mstd0.5-inc1', img_size=img_size),
    dict(type='ColorJitter', strength=0.0),  # none, as timm beside RandAugment
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.95),
    dict(type='PackInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader

# timm's Lamb clips the global gradient norm to 1.0 itself (thesis Table 6.1: RSB grad clip 1.0)
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='Lamb', lr=5e-3, weight_decay=0.02),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=2048)

experiment = dict(task='pretrain', dataset='imagenet', backbone='timm:resnet50',
                  backbone_overrides=dict(drop_path_rate=0.05),
                  pretrain=dict(recipe='supervised', epochs=max_epochs, checkpoint=None))
