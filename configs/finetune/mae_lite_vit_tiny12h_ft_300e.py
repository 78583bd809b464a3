# MAE-lite "impr." ImageNet fine-tuning of MAE-Tiny (Wang et al., ICML 2023, Table 1; official
# finetuning_exp.py): 300 epochs, AdamW (0.9, 0.999) 1e-3 x 1024 / 256 = 4e-3 at batch 1024 (8 GPUs x 128),
# weight decay 0.05, layer-wise lr decay 0.85, 5 warmup epochs, cosine to 1e-6, global average pooling +
# fc_norm, RandAugment m10/0.5, Mixup 0.2, no CutMix / label smoothing / erasing / drop path, no repeated
# augmentation. From mae_vit_tiny12h_in1k_400e.py: 78.0 top-1 (from dmae_vit_tiny12h_in1k_400e.py: 78.4).
#   python tools/train.py configs/finetune/mae_lite_vit_tiny12h_ft_300e.py --checkpoint OTHER/backbone.pth
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 300
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'
model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224', global_pool='avg',
                  drop_path_rate=0.0, init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    num_classes=num_classes,
    loss=dict(kind='ce'),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.2))
train_dataloader = dict(
    sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True),
    dataset=dict(pipeline=[
        dict(type='LoadImage'),
        dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
        dict(type='RandomHorizontalFlip'),
        dict(type='RandAugment', config_str='rand-m10-mstd0.5-inc1', img_size=224),
        dict(type='PackInputs'),
    ]))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=4e-3, betas=(0.9, 0.999), weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=0.85))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=1024)

# `pretrain` is read from the checkpoint's own metadata
experiment = dict(task='finetune', dataset='imagenet', backbone='vit_tiny12h_patch16_224',
                  backbone_overrides=dict(global_pool='avg'))
