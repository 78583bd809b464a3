# Mask R-CNN + MAE-lite's ViT-Tiny (192 wide, 12 heads), MAE-pretrained, on COCO with MAE-lite's protocol
# (its released `mask_rcnn_vitdet_t_100ep.py`, paper §5.2): ViTDet at 640x640 LSJ, windowed
# attention (14x14) with global blocks 2, 5, 8, 11, relative position biases (tables for the 40x40 grid of 640
# pixels in the global blocks), no drop path, AdamW 1e-4 with weight decay 0.05 and no layer decay, 100 epochs
# at batch 64, activation checkpointing (its `use_act_checkpoint = True`; with_cp here) and AMP (--amp).
# MAE-lite reports 39.9 box / 35.4 mask AP with its code (38.9 / 35.1 in the paper, Table 4).
_base_ = ['./_base_/protocols/maskrcnn_vitdet100e_maelite.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(
        arch='vit_tiny12h_patch16_224', drop_path_rate=0.0,
        with_cp=True,  # MAE-lite: model.backbone.net.use_act_checkpoint = True
        init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(in_channels=192))

experiment = dict(task='det', dataset='coco', backbone='vit_tiny12h_patch16_224', eval='ss')
