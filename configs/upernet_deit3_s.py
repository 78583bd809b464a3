# UperNet + DeiT III ViT-S/16 on ADE20k: the ViT-B config (upernet_xcit160k protocol) with 384-wide maps and a
# 384-channel head ("for small and tiny models we set it to the size of their working dimension", §6.3.5.2).
# Thesis Table 6.12: 41.7M parameters, 45.6 mIoU single-scale, 46.8 multi-scale (IN-1k, 400 epochs at 224).
_base_ = ['./upernet_deit3_b.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_small_in1k_400e.py`.
checkpoint = 'work_dirs/deit3_small_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='deit3_small_patch16_224', init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=384),
    decode_head=dict(in_channels=[384, 384, 384, 384], channels=384),
    auxiliary_head=dict(in_channels=384))

experiment = dict(backbone='deit3_small_patch16_224')
