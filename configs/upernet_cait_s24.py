# UperNet + CaiT-S24 on ADE20k: the maps of self-attention blocks 8, 12, 16 and 24 (the class-attention
# stage is a classifier and is not built for dense tasks), under the ViT-B config's upernet_xcit160k protocol with
# a 384-channel head as ViT-S. No paper reports this row.
_base_ = ['./upernet_deit3_b.py']

# Backbone weights: the official CaiT-S24 at 224 (400 epochs, hard distillation), loaded as released:
# https://dl.fbaipublicfiles.com/deit/S24_224.pth
checkpoint = 'checkpoints/S24_224.pth'

model = dict(
    backbone=dict(type='vitbench.CaiT', arch='cait_s24_224', out_indices=[7, 11, 15, 23],
                  init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=384),
    decode_head=dict(in_channels=[384, 384, 384, 384], channels=384),
    auxiliary_head=dict(in_channels=384))

experiment = dict(backbone='cait_s24_224',
                  pretrain=dict(recipe='supervised', epochs=400, checkpoint=checkpoint))
