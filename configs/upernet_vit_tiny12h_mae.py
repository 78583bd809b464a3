# UperNet + MAE-lite's ViT-Tiny (192 wide, 12 heads), MAE-pretrained, on ADE20k, with a 192-channel head.
# Optimiser as MAE-lite's ADE20k runs (AdamW 1e-4, layer decay 0.8, drop path 0.1).
# Thesis Table 6.12, DeiT III ViT-T (supervised) for reference: 10.9M parameters, 40.1 / 41.8 mIoU.
_base_ = ['./upernet_deit3_b.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='vit_tiny12h_patch16_224', init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=192),
    decode_head=dict(in_channels=[192, 192, 192, 192], channels=192),
    auxiliary_head=dict(in_channels=192))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.8))

experiment = dict(backbone='vit_tiny12h_patch16_224')
