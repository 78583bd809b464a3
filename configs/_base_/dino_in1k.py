# DINO (Caron et al., ICCV 2021) on ImageNet-1k, the official main_dino.py recipe (facebookresearch/dino, its
# defaults and README): multi-crop, 2 global crops of 224 (scale 0.4-1) + 8 local crops of 96 (scale 0.05-0.4),
# bicubic; each crop: flip, colour jitter 0.4/0.4/0.2/0.1 p 0.8, grayscale p 0.2, then Gaussian blur p 1.0 /
# 0.1 / 0.5 (global 1 / global 2 / local), solarisation p 0.2 on global 2. Head 3 x 2048 -> 256 -> 65536,
# last layer weight-normalised and norm-frozen, frozen for the first epoch; teacher momentum 0.996 cosine to 1,
# teacher temperature 0.04 (0.07 after a 30-epoch warm-up from 0.04 for long ViT-S runs), student 0.1, centre
# momentum 0.9. AdamW, lr 5e-4 x batch / 256 (1024 = 16 GPUs x 64 in the README's ViT-S/16 run), linear warm-up
# over 10 epochs from 0, cosine to 1e-6; weight decay 0.04 cosine to 0.4, none on biases and 1-D parameters (the
# class token and position embedding are decayed, as the official get_params_groups); per-parameter gradient
# clipping at 3.0; stochastic depth 0.1 in the student only; fp16. A recipe config sets the backbone and epochs.
_base_ = ['./imagenet_runtime.py']

data_root = 'data/imagenet'
global_size, local_size = 224, 96
local_crops_number = 8
max_epochs = 100
warmup_epochs = 10
base_lr = 5e-4 * 1024 / 256  # the official lr x batch_size / 256, at batch 1024 (auto_scale_lr scales it)

model = dict(
    type='DINO',
    backbone=dict(arch=None, drop_path_rate=0.1),
    out_dim=65536, hidden_dim=2048, bottleneck_dim=256, head_layers=3, use_bn_in_head=False, norm_last_layer=True,
    momentum_teacher=0.996, teacher_temp=0.04, warmup_teacher_temp=0.04, warmup_teacher_temp_epochs=0,
    student_temp=0.1, center_momentum=0.9, clip_grad=3.0, freeze_last_layer=1,
    data_preprocessor=dict(type='ClsDataPreprocessor'))

_flip_and_color_jitter = [
    dict(type='RandomHorizontalFlip'),
    dict(type='RandomColorJitter', brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1, prob=0.8),
    dict(type='RandomGrayscale', prob=0.2)]
_global_1 = [dict(type='RandomResizedCrop', size=global_size, scale=(0.4, 1.0), interpolation='bicubic')] + \
    _flip_and_color_jitter + [dict(type='GaussianBlur', prob=1.0)]
_global_2 = [dict(type='RandomResizedCrop', size=global_size, scale=(0.4, 1.0), interpolation='bicubic')] + \
    _flip_and_color_jitter + [dict(type='GaussianBlur', prob=0.1), dict(type='Solarize', prob=0.2)]
_local = [dict(type='RandomResizedCrop', size=local_size, scale=(0.05, 0.4), interpolation='bicubic')] + \
    _flip_and_color_jitter + [dict(type='GaussianBlur', prob=0.5)]
global_views, local_view = [_global_1, _global_2], _local  # for configs that change the crops
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='MultiView', views=global_views + [local_view] * local_crops_number),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=64, num_workers=10, persistent_workers=True, pin_memory=True,
    drop_last=True,  # as the official loader
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='train', pipeline=train_pipeline))
# no validation: DINO is evaluated downstream (k-NN, linear probe, fine-tuning) from backbone.pth (the teacher's)
val_dataloader = val_cfg = val_evaluator = None

optim_wrapper = dict(
    type='OptimWrapper', optimizer=dict(type='AdamW', lr=base_lr, weight_decay=0.04),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: no decay on biases and 1-D parameters only
    paramwise_cfg=dict(layer_decay_rate=1.0, backbone='student.backbone', decay_embeddings=True))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-9, by_epoch=True, begin=0, end=warmup_epochs, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=warmup_epochs, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=1024)
model_wrapper_cfg = dict(type='DINODistributedDataParallel')  # DINO's own iteration under DDP (pretrain/dino.py)
custom_hooks = [dict(type='DINOScheduleHook', weight_decay_end=0.4), dict(type='BackboneExportHook')]
