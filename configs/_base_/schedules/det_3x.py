# The "3x" COCO schedule of Mask R-CNN (36 epochs; mmdet / Swin / XCiT), in iterations at batch 16:
# 36 x 118k images / 16 = 265,500 iterations; AdamW lr 1e-4, weight decay 0.05 (Swin's and XCiT's), 500
# linear warm-up iterations, lr x0.1 at epochs 27 and 33. No layer-wise decay (those protocols use none).
_base_ = ['./det_100e.py']
max_iters = 265500
val_interval = 22125  # every 3 epochs; the last iteration is always evaluated
optim_wrapper = dict(optimizer=dict(lr=1e-4, weight_decay=0.05), paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=max_iters, milestones=[199125, 243375], gamma=0.1),
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=max_iters, val_interval=val_interval)
auto_scale_lr = dict(enable=False, base_batch_size=16)
default_hooks = dict(checkpoint=dict(interval=val_interval))
