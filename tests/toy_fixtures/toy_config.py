default_scope = 'vitbench'
custom_imports = dict(imports=['toy_components'], allow_failed_imports=False)

model = dict(type='ToyRegressor')
train_dataloader = dict(
    batch_size=4,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ToyRegressionDataset', size=32))
train_cfg = dict(by_epoch=False, max_iters=4)
optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.05, momentum=0.9))
default_hooks = dict(
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=2),
    logger=dict(type='LoggerHook', interval=1))
custom_hooks = [dict(type='DumpParametersHook')]
randomness = dict(seed=0)
env_cfg = dict(dist_cfg=dict(backend='gloo'))
