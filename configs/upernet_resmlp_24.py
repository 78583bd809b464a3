# UperNet + ResMLP-S24 on ADE20k as thesis §4.3.6 (Table 4.6): fine-tuned at 224x224 (training images resized
# to 896x224, then random-resized and cropped to 224), evaluated at the usual resolution with a 224x224
# sliding window. ResMLP's cross-patch layers fix its 14x14 grid, so crops are the pre-training size. The maps
# of blocks 8, 12, 16 and 24, rescaled 4x / 2x / 1x / 0.5x as the ViTs'. Table 4.6: 39.1 mIoU (ResMLP-12 35.9,
# ResMLP-36 39.1, ResMLP-B24 42.5; DeiT-S 40.5, DeiT-B 42.3 in the same setting).
# The protocol (configs/_base_/protocols/upernet_resmlp224.py) fixes the crops, the sliding window and the
# schedule the thesis does not give (the suite's 160k iterations, AdamW 1e-4); here: layer decay 0.75 (24 blocks, as
# upernet_deit3_l.py), drop path 0.1, the 384-channel head of an S-width model.
#   python tools/train.py configs/upernet_resmlp_24.py
_base_ = ['./_base_/protocols/upernet_resmlp224.py']

# Backbone weights: the official ResMLP-S24 (a bare state dict), loaded as released:
# https://dl.fbaipublicfiles.com/deit/resmlp_24_no_dist.pth (the distilled resmlp_24_dist.pth loads too)
checkpoint = 'checkpoints/resmlp_24_no_dist.pth'

model = dict(
    backbone=dict(
        _delete_=True,
        type='vitbench.ResMLP',
        arch='resmlp_24',
        img_size=(224, 224),  # the cross-patch layers' grid; smaller slide windows are padded to it
        out_indices=[7, 11, 15, 23],
        final_norm=False,
        drop_path_rate=0.1,
        init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(embed_dim=384),
    decode_head=dict(in_channels=[384, 384, 384, 384], channels=384),
    auxiliary_head=dict(in_channels=384))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.75))  # 24 blocks: as upernet_deit3_l.py

experiment = dict(task='seg', dataset='ade20k', backbone='resmlp_24', eval='ss',
                  pretrain=dict(recipe='supervised', epochs=400, checkpoint=checkpoint))
