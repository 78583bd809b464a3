# toy_random_config.py by epochs, its augmentation in 2 persistent dataloader workers: 3 epochs of 4 iterations,
# a checkpoint and a validation after each epoch.
_base_ = ['toy_random_config.py']

train_dataloader = dict(num_workers=2, persistent_workers=True, dataset=dict(size=16))
train_cfg = dict(_delete_=True, by_epoch=True, max_epochs=3, val_interval=1)
default_hooks = dict(checkpoint=dict(type='CheckpointHook', by_epoch=True, interval=1))
