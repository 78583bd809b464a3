# Runtime of every ImageNet pre-training / fine-tuning config (configs/pretrain, configs/finetune, the demos).
default_scope = 'vitbench'
env_cfg = dict(
    cudnn_benchmark=True,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'))
default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=100),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=10, max_keep_ckpts=2, save_last=True),
    sampler_seed=dict(type='DistSamplerSeedHook'))
# backbone.pth for every other task (recipe and epochs from `experiment.pretrain`)
custom_hooks = [dict(type='BackboneExportHook')]
log_processor = dict(by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='Visualizer', vis_backends=vis_backends)
log_level = 'INFO'
load_from = None
resume = False
randomness = dict(seed=0)
