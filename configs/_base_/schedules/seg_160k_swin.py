# 160k iterations with Swin's ADE20k optimiser, the schedule the PatchConvNet thesis chapter names ("the same
# schedule as in Swin: 160k iterations with UPerNet", §5.3.3; it gives no optimiser settings): AdamW lr 6e-5,
# weight decay 0.01, 1500 linear warm-up iterations, then poly (power 1) to 0; batch 16. No layer-wise decay
# (Swin has none, and 0.65 ** 61 would freeze a 60-block trunk's first blocks).
_base_ = ['./seg_160k.py']
optim_wrapper = dict(optimizer=dict(lr=6e-5, weight_decay=0.01), paramwise_cfg=dict(layer_decay_rate=1.0))
