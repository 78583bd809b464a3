# Attention-only fine-tuning at 384 of a DeiT III ViT-B trained at 224 ("Three things everyone should know
# about ViTs", §4 / Table 5: 84.3 top-1, as full fine-tuning). Trained: the qkv and proj weights of every
# attention layer, pos_embed (bicubically resized 14x14 -> 24x24 at load) and the head; frozen: patch embedding,
# class token, LayerNorms, MLPs, LayerScale (pretrain/finetune.py). Schedule of the DeiT III resolution
# fine-tuning (thesis §6.2): AdamW 1e-5 at batch 512 (8 GPUs x 64), weight decay 0.1, 20 epochs, 5 warmup,
# no repeated augmentation, the training augmentation kept (RandAugment, Mixup 0.8, CutMix 1.0, smoothing 0.1);
# test crop ratio 1.0.   configs/finetune/deit3_base_full_ft384.py is the same with every weight trained.
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 20
img_size = 384
checkpoint = 'work_dirs/deit3_base_in1k_800e/backbone.pth'
model = dict(
    type='ImageClassifier',
    backbone=dict(arch='deit3_base_patch16_224', img_size=img_size, drop_path_rate=0.2,
                  init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    num_classes=num_classes,
    trainable='attention',
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.8,
                           cutmix_alpha=1.0))
train_dataloader = dict(
    batch_size=64,
    sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True),
    dataset=dict(pipeline=[
        dict(type='LoadImage'),
        dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
        dict(type='RandomHorizontalFlip'),
        dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
        dict(type='PackInputs'),
    ]))
val_dataloader = dict(batch_size=64, dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]))
test_dataloader = val_dataloader

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-5, weight_decay=0.1),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: timm's no-weight-decay rule only
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=5)
auto_scale_lr = dict(base_batch_size=512)

experiment = dict(task='finetune', dataset='imagenet', backbone='deit3_base_patch16_224',
                  backbone_overrides=dict(img_size=img_size))
