# Semantic FPN on a plain ViT as MAE-lite builds it (wangsr126/MAE-Lite projects/eval_tools/seg/configs/_base_/
# models/fpn_mae.py with configs/sem_fpn/semantic_fpn_t_160k.py's overrides): four blocks spread over the depth,
# rescaled 4x / 2x / 1x / 0.5x and narrowed to a quarter of the width by MAE-lite's Feature2Pyramid_Scale
# (vitbench.ScaledFeature2Pyramid, downstream/seg/neck.py), decoded by mmseg's FPNHead (128 channels); no
# auxiliary head. Widths here are MAE-lite's ViT-Tiny's (192 -> 48); `--backbone NAME` rewrites them
# (downstream/seg/swap.py: the head reads int(embed_dim x 0.25) channels).
norm_cfg = dict(type='SyncBN', requires_grad=True)  # plain BN when not distributed (mmengine reverts it)
data_preprocessor = dict(
    type='SegDataPreProcessor',
    mean=[123.675, 116.28, 103.53],  # ImageNet statistics, as in pretraining
    std=[58.395, 57.12, 57.375],
    bgr_to_rgb=True,
    pad_val=0,
    seg_pad_val=255,
    size=(512, 512),
    test_cfg=dict(size_divisor=16))  # test images padded to whole patches (upernet_vit.py says why)
model = dict(
    type='EncoderDecoder',
    data_preprocessor=data_preprocessor,
    backbone=dict(
        type='vitbench.VisionTransformer',
        arch='vit_tiny12h_patch16_224',
        img_size=512,  # position embeddings resized once, when the checkpoint is loaded
        out_indices=[3, 5, 7, 11],
        final_norm=False,  # raw block outputs (mmseg's MAE backbone: final_norm=False)
        drop_path_rate=0.1),
    neck=dict(type='vitbench.ScaledFeature2Pyramid', embed_dim=192, rescales=[4, 2, 1, 0.5], scale_factor=0.25,
              norm_cfg=norm_cfg),
    decode_head=dict(
        type='FPNHead',
        in_channels=[48, 48, 48, 48],
        in_index=[0, 1, 2, 3],
        feature_strides=[4, 8, 16, 32],
        channels=128,
        dropout_ratio=0.1,
        num_classes=150,
        norm_cfg=norm_cfg,
        align_corners=False,
        loss_decode=dict(type='CrossEntropyLoss', use_sigmoid=False, loss_weight=1.0)),
    auxiliary_head=None,
    train_cfg=dict(),
    test_cfg=dict(mode='slide', crop_size=(512, 512), stride=(341, 341)))
