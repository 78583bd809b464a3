# The "Three things" second baseline (§2.2): ./imagenet_three_things.py for 400 epochs, with LayerScale (init
# 1e-4: the deit3_* variants' own; the 300-epoch configs turn it off with init_values=None).
_base_ = ['./imagenet_three_things.py']

max_epochs = 400
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
experiment = dict(pretrain=dict(epochs=max_epochs))
