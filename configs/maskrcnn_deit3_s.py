# Mask R-CNN + DeiT III ViT-S/16 on COCO: the ViT-B protocol (1024 LSJ, windowed attention with global
# blocks 2, 5, 8, 11, layer decay 0.7, drop path 0.1, 100 epochs) with a 384-wide pyramid input.
_base_ = ['./maskrcnn_deit3_b.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_small_in1k_400e.py`.
checkpoint = 'work_dirs/deit3_small_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='deit3_small_patch16_224', init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(in_channels=384))

experiment = dict(backbone='deit3_small_patch16_224')
