# The toy task with randomness everywhere a real run has it (tests/test_faults_resume.py): noisy augmentation in
# the dataloader (main process, or workers with train_dataloader.num_workers), dropout, a noisy validation every
# 2 iterations right after each checkpoint, and the FaultHook that kills the run where the environment says.
_base_ = ['toy_config.py']
custom_imports = dict(imports=['toy_components', 'toy_faults'], allow_failed_imports=False)

model = dict(type='ToyDropoutRegressor', p=0.3)
train_dataloader = dict(dataset=dict(type='ToyNoisyRegressionDataset', size=32))
val_dataloader = dict(
    batch_size=8,
    num_workers=0,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ToyNoisyRegressionDataset', size=8))
val_evaluator = dict(type='ToyMSEMetric')
val_cfg = dict()
train_cfg = dict(by_epoch=False, max_iters=8, val_interval=2)
custom_hooks = [dict(type='DumpParametersHook'), dict(type='DumpMetricsHook'), dict(type='FaultHook')]
