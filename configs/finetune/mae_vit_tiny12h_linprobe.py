# Linear probe of MAE-Tiny (MAE protocol, facebookresearch/mae main_linprobe.py): the frozen encoder's class
# token -> BatchNorm without affine parameters -> linear head; LARS with base lr 0.1 x 16384 / 256 = 6.4 at
# batch 16384 (8 GPUs x 2048), no weight decay, 90 epochs, 10 warmup, RandomResizedCrop + flip only.
# Expected: 23.4 top-1 (MAE-lite §4: MAE-Tiny's higher layers are weak, fine-tuning gets 78.0).
_base_ = ['./mae_lite_vit_tiny12h_ft_300e.py']

max_epochs = 90
model = dict(
    backbone=dict(global_pool='token'),
    trainable='linear',
    probe_norm=True,
    data_preprocessor=dict(mixup_alpha=0.))
train_dataloader = dict(batch_size=2048, dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='PackInputs'),
]))
optim_wrapper = dict(
    optimizer=dict(type='Lars', lr=6.4, momentum=0.9, weight_decay=0., _delete_=True),
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=10, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=10, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=16384)
experiment = dict(backbone_overrides=dict(global_pool='token'))
