# UperNet + DeiT III ViT-L/16 on ADE20k: 24 blocks, the maps of blocks 8, 12, 16 and 24.
# Thesis Table 6.12: 353.6M parameters, 51.5 mIoU single-scale, 52.0 multi-scale.
_base_ = ['./upernet_deit3_b.py']

# Backbone weights: the official DeiT III ViT-L (IN-1k, 800 epochs), loaded as released:
# https://dl.fbaipublicfiles.com/deit/deit_3_large_224_1k.pth
checkpoint = 'checkpoints/deit_3_large_224_1k.pth'

model = dict(
    backbone=dict(arch='deit3_large_patch16_224', out_indices=[7, 11, 15, 23], drop_path_rate=0.2,
                  init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=1024),
    decode_head=dict(in_channels=[1024, 1024, 1024, 1024]),
    auxiliary_head=dict(in_channels=1024))
# Not given by the thesis: MAE's rate and drop path for its 24-block ViT-L (0.65 ** 25 would all but freeze
# the first blocks).
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.75))

experiment = dict(backbone='deit3_large_patch16_224',
                  pretrain=dict(recipe='supervised', epochs=800, checkpoint=checkpoint))
