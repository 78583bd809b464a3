# MoCo-v3 (Chen et al., ICCV 2021) on the 12-head ViT-Tiny: "MoCov3-Tiny" of MAE-lite (Wang et al., ICML 2023,
# Table 1: 400 epochs, 52 h on 8 V100s; official playground/mocov3/mocov3_exp.py and MOCOV3.md): projector
# 3 x 4096 -> 256, predictor 2 x 4096 -> 256 (BN, the last without affine), momentum 0.99 cosine to 1,
# temperature 0.2, patch embedding trained (stop_grad_conv1=False), two asymmetric views (RandomResizedCrop 0.08-1,
# colour jitter 0.4/0.4/0.2/0.1 p 0.8, blur p 1.0 / 0.1, grayscale p 0.2, flip, solarise p 0 / 0.2; ssl_transform).
# AdamW (0.9, 0.999) 1.5e-4 x 1024 / 256 = 6e-4 at batch 1024 (8 GPUs x 128), weight decay 0.1 on every parameter
# (the official optimizer takes model.parameters() as they are), 40 warm-up epochs from 1e-6, cosine to 0, AMP.
# Fine-tuned with configs/finetune/mae_lite_vit_tiny12h_ft_300e.py at layer decay 0.75 and class-token pooling
# (MOCOV3.md): 73.7 top-1 (Table 1), below training from scratch (75.8); transfer and COCO: Table 4.
_base_ = ['../_base_/imagenet_runtime.py']

data_root = 'data/imagenet'
img_size = 224
max_epochs = 400
warmup_epochs = 40
base_lr = 6e-4

model = dict(
    type='MoCoV3',
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_tiny12h_patch16_224'),
    dim=256,
    mlp_dim=4096,
    temperature=0.2,
    base_momentum=0.99,
    stop_grad_conv1=False,
    data_preprocessor=dict(type='ClsDataPreprocessor'))

_view = [
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0), interpolation='bilinear'),
    dict(type='RandomColorJitter', brightness=0.4, contrast=0.4, saturation=0.2, hue=0.1, prob=0.8),
]
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='MultiView', views=[
        _view + [dict(type='GaussianBlur', prob=1.0), dict(type='RandomGrayscale', prob=0.2),
                 dict(type='RandomHorizontalFlip')],
        _view + [dict(type='GaussianBlur', prob=0.1), dict(type='RandomGrayscale', prob=0.2),
                 dict(type='RandomHorizontalFlip'), dict(type='Solarize', prob=0.2)],
    ]),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=128,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,  # the loss gathers equal slices of the batch from every rank
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='train', pipeline=train_pipeline))
# no validation: MoCo-v3 is evaluated downstream (fine-tuning, linear probe, transfer) from backbone.pth
val_dataloader = val_cfg = val_evaluator = None

optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='AdamW', lr=base_lr, betas=(0.9, 0.999),
                                                          weight_decay=0.1))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6 / base_lr, by_epoch=True, begin=0, end=warmup_epochs,
         convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=warmup_epochs, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=1024)
custom_hooks = [dict(type='MoCoMomentumHook'), dict(type='BackboneExportHook')]

experiment = dict(task='pretrain', dataset='imagenet', backbone='vit_tiny12h_patch16_224',
                  pretrain=dict(recipe='mocov3', epochs=max_epochs, checkpoint=None))
