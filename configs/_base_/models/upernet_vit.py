# UperNet on a plain ViT (BEiT / MAE / XCiT practice): four blocks spread over the depth, rescaled
# 4x / 2x / 1x / 0.5x by mmseg's Feature2Pyramid, decoded by UPerHead, plus an auxiliary FCN head on the
# 1x level. Widths here are DeiT III-B's; the head width follows the backbone's size: 512 for base and
# larger, 384 small, 192 tiny (thesis §6.3.5.2). `--backbone NAME` rewrites them all
# (downstream/seg/swap.py).
norm_cfg = dict(type='SyncBN', requires_grad=True)  # plain BN when not distributed (mmengine reverts it)
data_preprocessor = dict(
    type='SegDataPreProcessor',
    mean=[123.675, 116.28, 103.53],  # ImageNet statistics, as in pretraining
    std=[58.395, 57.12, 57.375],
    bgr_to_rgb=True,
    pad_val=0,
    seg_pad_val=255,
    size=(512, 512),
    # test images padded to a multiple of the patch size: a slide window on an image smaller than the
    # crop (multi-scale test at ratio < 1) takes the image's own size, which the ViT must be able to patch
    test_cfg=dict(size_divisor=16))
model = dict(
    type='EncoderDecoder',
    data_preprocessor=data_preprocessor,
    backbone=dict(
        type='vitbench.VisionTransformer',
        arch='deit3_base_patch16_224',
        img_size=512,  # position embeddings resized once, when the checkpoint is loaded
        out_indices=[3, 5, 7, 11],
        final_norm=False,  # raw block outputs; the neck and heads normalise (BEiT / MAE)
        drop_path_rate=0.1),
    neck=dict(type='Feature2Pyramid', embed_dim=768, rescales=[4, 2, 1, 0.5], norm_cfg=norm_cfg),
    decode_head=dict(
        type='UPerHead',
        in_channels=[768, 768, 768, 768],
        in_index=[0, 1, 2, 3],
        pool_scales=(1, 2, 3, 6),
        channels=512,
        dropout_ratio=0.1,
        num_classes=150,
        norm_cfg=norm_cfg,
        align_corners=False,
        loss_decode=dict(type='CrossEntropyLoss', use_sigmoid=False, loss_weight=1.0)),
    auxiliary_head=dict(
        type='FCNHead',
        in_channels=768,
        in_index=2,
        channels=256,
        num_convs=1,
        concat_input=False,
        dropout_ratio=0.1,
        num_classes=150,
        norm_cfg=norm_cfg,
        align_corners=False,
        loss_decode=dict(type='CrossEntropyLoss', use_sigmoid=False, loss_weight=0.4)),
    train_cfg=dict(),
    test_cfg=dict(mode='slide', crop_size=(512, 512), stride=(341, 341)))
