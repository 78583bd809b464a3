# ViTDet's 100-epoch COCO schedule, in iterations: 100 x 118k images / batch 64 = 184,375 iterations; AdamW
# (lr 1e-4 at batch 64) with layer-wise LR decay, 250 warm-up iterations, then lr x0.1 at epochs 88 and 96
# (24/27 and 26/27 of the run).
max_iters = 184375
val_interval = 18438  # every ~10 epochs; the last iteration is always evaluated
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.1),
    constructor='vitbench.LayerDecayOptimWrapperConstructor',  # scales from the backbone's get_layer_id
    paramwise_cfg=dict(layer_decay_rate=0.7))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=250),
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=max_iters, milestones=[163889, 177546], gamma=0.1),
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters, val_interval=val_interval)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
# the lr above is for a total batch of 64: `--cfg-options auto_scale_lr.enable=True` rescales it linearly
# to the actual GPUs x batch_size
auto_scale_lr = dict(enable=False, base_batch_size=64)
default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50, log_metric_by_epoch=False),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=val_interval, save_last=True,
                    max_keep_ckpts=2),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='DetVisualizationHook'))
