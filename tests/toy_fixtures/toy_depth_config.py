# The toy depth task (tests/toy_fixtures/toy_depth/) trained for four iterations: its package comes in through
# custom_imports, as a task from outside the suite does.
default_scope = 'vitbench'
custom_imports = dict(imports=['toy_depth'], allow_failed_imports=False)
experiment = dict(task='toy_depth', dataset='toyroom-demo', backbone='vit_demo_patch8_64',
                  backbone_overrides=dict(img_size=32))
model = dict(type='ToyDepthModel', arch='vit_demo_patch8_64', img_size=32)
train_dataloader = dict(batch_size=4, num_workers=0, collate_fn=dict(type='default_collate'),
                        sampler=dict(type='DefaultSampler', shuffle=True), dataset=dict(type='ToyRoomDataset'))
val_dataloader = dict(batch_size=4, num_workers=0, collate_fn=dict(type='default_collate'),
                      sampler=dict(type='DefaultSampler', shuffle=False),
                      dataset=dict(type='ToyRoomDataset', size=8, seed=1))
val_evaluator = dict(type='ToyDepthMetric')
train_cfg = dict(by_epoch=False, max_iters=4, val_interval=4)
val_cfg = dict()
optim_wrapper = dict(optimizer=dict(type='AdamW', lr=1e-3))
default_hooks = dict(checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=4),
                     logger=dict(type='LoggerHook', interval=1))
randomness = dict(seed=0)
