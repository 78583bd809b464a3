# DeiT III ViT-B, supervised on ImageNet-21k (winter 2021, 10,450 classes) for 240 epochs at 224, as the released
# deit_3_base_224_21k.pth was pre-trained (facebookresearch/deit README_revenge.md, ViT-B ImageNet-21k command;
# thesis Table 6.1 "Ours IN-21k pretrain", §6.3.3): LAMB 1e-3 at batch 2048 (32 GPUs x 64; --lr 0.001
# --unscale-lr), weight decay 0.02, cosine to 1e-5 after 5 warm-up epochs, cross-entropy with label smoothing 0.1,
# no Mixup, CutMix 1.0, Simple Random Crop + flip + 3-Augment + colour jitter 0.3, no repeated augmentation,
# gradient clipping 1.0 (inside LAMB), test crop ratio 1.0, LayerScale 1e-4, drop path 0.1 (--drop-path 0.1).
# Sources disagree on the rate: Table 6.1 prints 3e-3, the command of the released weights 1e-3 (its note: 1.5e-3
# at batch 4096); this follows the command, like the expected numbers. Drop path: the command's, equal to thesis
# Table 6.14's for 90 epochs.
# Expected on ImageNet-21k val: 56.5 top-1 (official log, epoch 240). After the 50-epoch ImageNet-1k fine-tune,
# configs/finetune/deit3_base_in21k_ft_in1k.py: 85.7 top-1 / ReaL 89.5 / V2 76.5 (thesis Tables 6.5, 6.8, 6.9).
#   python tools/train.py configs/pretrain/deit3_base_in21k_240e.py --amp   (data: pretrain/imagenet21k.py)
# deit3_{small,large,huge}_in21k_*.py derive from this file.
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet21k_deit3.py']

num_classes = 10450
max_epochs = 240
model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_base_patch16_224', drop_path_rate=0.1),
    num_classes=num_classes,
    loss=dict(kind='ce', label_smoothing=0.1),  # BCE "gave no compelling results" on IN-21k (thesis §6.2)
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.0,
                           cutmix_alpha=1.0))

optim_wrapper = dict(  # timm's Lamb clips the global gradient norm to 1.0 itself, like Apex's FusedLAMB
    type='OptimWrapper',
    optimizer=dict(type='Lamb', lr=1e-3, weight_decay=0.02),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: timm's no-weight-decay rule only
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [  # linear warm-up from lr/1000 (official: from 1e-6), cosine to the official --min-lr 1e-5
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=2048)  # --cfg-options auto_scale_lr.enable=True for other batch sizes

experiment = dict(task='pretrain', dataset='imagenet21k', backbone='deit3_base_patch16_224',
                  backbone_overrides=dict(drop_path_rate=0.1),
                  pretrain=dict(recipe='supervised', epochs=max_epochs, checkpoint=None))
