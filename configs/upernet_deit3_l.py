# UperNet + DeiT III ViT-L/16 on ADE20k: the ViT-B config (upernet_xcit160k protocol, 512-channel head, no
# layer-wise decay) on 24 blocks, the maps of blocks 8, 12, 16 and 24 (XCiT's 24-block out_indices).
# Thesis Table 6.12: 353.6M parameters, 51.5 mIoU single-scale, 52.0 multi-scale (IN-1k, 400 epochs at 224).
_base_ = ['./upernet_deit3_b.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_large_in1k_400e.py`. (The
# released deit_3_large_224_1k.pth is the 800-epoch model: not the one of this table.)
checkpoint = 'work_dirs/deit3_large_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='deit3_large_patch16_224', out_indices=[7, 11, 15, 23], drop_path_rate=0.2,
                  init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=1024),
    decode_head=dict(in_channels=[1024, 1024, 1024, 1024]),
    auxiliary_head=dict(in_channels=1024))
# drop path 0.2: not given by the thesis; XCiT's 24-block M24 fine-tunes with 0.15, DeiT III-L pre-trains with 0.4.

experiment = dict(backbone='deit3_large_patch16_224')
