# The "Three things everyone should know about ViTs" baseline recipe (Touvron et al., ECCV 2022, §2.2): the A2
# procedure of Wightman et al. ("ResNet strikes back"), whose values the seeds give in the thesis' Table 6.1
# column "Wightman et al." (the paper does not restate them): LAMB (gradient-norm clipping 1.0 inside timm's
# Lamb, as Apex's FusedLAMB), batch 2048 (8 GPUs x 256), cosine to 1e-5 after 5 warm-up epochs, weight decay
# 0.02, binary cross-entropy without label smoothing, RandomResizedCrop + flip + RandAugment 7/0.5, Mixup 0.2 /
# CutMix 1.0, no random erasing, repeated augmentation x3, test crop ratio 0.95, 300 epochs; ViT changes of
# §2.2: lr 4e-3 for ViT-Ti / S and 3e-3 for ViT-B / L, stochastic depth 0 / 0.05 / 0.1 / 0.4 for Ti / S / B / L
# (uniform over the blocks, as the official models_v2.py). Main baseline: 300 epochs without LayerScale
# (configs set backbone init_values=None); second baseline: 400 epochs with LayerScale 1e-4 (the official
# code's init; the paper does not state it). Configs set the backbone, lr, drop path and, for 400 epochs,
# max_epochs / param_scheduler / train_cfg / experiment.pretrain.epochs.
_base_ = ['./imagenet_runtime.py', './datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 300
img_size = 224
model = dict(
    type='ImageClassifier',
    backbone=dict(arch=None),  # the config's named variant, drop path and LayerScale
    num_classes=num_classes,
    loss=dict(kind='bce'),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.2,
                           cutmix_alpha=1.0))
train_dataloader = dict(
    batch_size=256,
    dataset=dict(pipeline=[
        dict(type='LoadImage'),
        dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
        dict(type='RandomHorizontalFlip'),
        dict(type='RandAugment', config_str='rand-m7-mstd0.5-inc1', img_size=img_size),
        dict(type='PackInputs'),
    ]))
val_dataloader = dict(dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.95),
    dict(type='PackInputs'),
]))
test_dataloader = val_dataloader

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='Lamb', lr=None, weight_decay=0.02),  # lr: per model (§2.2)
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: timm's no-weight-decay rule only
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=2048)  # --cfg-options auto_scale_lr.enable=True for other batch sizes

experiment = dict(task='pretrain', dataset='imagenet', backbone=None,
                  pretrain=dict(recipe='supervised', epochs=max_epochs, checkpoint=None))
