# Mask R-CNN on a plain ViT, ViTDet-style (Li et al., 2022; detectron2 `common/models/mask_rcnn_vitdet.py`):
# - the backbone keeps its single stride-16 map; windowed attention (14x14 tokens, the 224-pixel pretraining
#   grid) in all blocks but four evenly spaced global ones, so 1024-pixel inputs stay affordable;
# - vitbench.SimpleFeaturePyramid rescales the last map 4x / 2x / 1x / 0.5x (+ a max-pooled level):
#   strides 4-64, 256 channels, LayerNorm;
# - a 2-conv RPN, a 4conv1fc box head and a 4-conv mask head, with LayerNorm in the heads' convs.
# - relative position biases in every block, as detectron2's ViTDet (`use_rel_pos=True` in
#   `configs/common/models/mask_rcnn_vitdet.py`): decomposed per axis, tables of 2 x 14 - 1 rows in the windowed
#   blocks and 2 x img_size / 16 - 1 in the global ones (127 at 1024 pixels, 79 at 640), zero-initialised, so the
#   backbone starts exactly as pretrained (checkpoints have no tables; they load with them at zero).
# Widths are DeiT III-B's; `--backbone NAME` rewrites them (downstream/det/swap.py).
norm_cfg = dict(type='vitbench.LN2d', eps=1e-6)  # detectron2's LayerNorm over channels
model = dict(
    type='MaskRCNN',
    data_preprocessor=dict(
        type='DetDataPreprocessor',
        mean=[123.675, 116.28, 103.53],  # ImageNet statistics, as in pretraining
        std=[58.395, 57.12, 57.375],
        bgr_to_rgb=True,
        pad_mask=True,
        # = the LSJ image size: every batch, train or test, is padded to that square with zeros after
        # normalisation, as detectron2's square_pad. (A Pad transform in the pipeline would also enlarge
        # img_shape, and predictions could then fall outside the image.)
        pad_size_divisor=1024),
    backbone=dict(
        type='vitbench.VisionTransformer',
        arch='deit3_base_patch16_224',
        img_size=1024,  # position embeddings resized once, when the checkpoint is loaded
        out_indices=[11],
        final_norm=False,  # the raw last block, as ViTDet; the pyramid normalises
        window_size=14,
        global_attn_indexes=[2, 5, 8, 11],
        use_rel_pos=True,
        drop_path_rate=0.1),
    neck=dict(
        type='vitbench.SimpleFeaturePyramid',
        in_channels=768,
        out_channels=256,
        scales=[4.0, 2.0, 1.0, 0.5],  # patch 16 -> strides 4, 8, 16, 32 (+ 64 from the extra max-pool)
        num_outs=5,
        norm_cfg=norm_cfg),
    rpn_head=dict(
        type='RPNHead',
        in_channels=256,
        feat_channels=256,
        num_convs=2,
        anchor_generator=dict(
            type='AnchorGenerator', scales=[8], ratios=[0.5, 1.0, 2.0], strides=[4, 8, 16, 32, 64]),
        bbox_coder=dict(type='DeltaXYWHBBoxCoder', target_means=[0.0] * 4, target_stds=[1.0] * 4),
        loss_cls=dict(type='CrossEntropyLoss', use_sigmoid=True, loss_weight=1.0),
        loss_bbox=dict(type='L1Loss', loss_weight=1.0)),
    roi_head=dict(
        type='StandardRoIHead',
        bbox_roi_extractor=dict(
            type='SingleRoIExtractor',
            roi_layer=dict(type='RoIAlign', output_size=7, sampling_ratio=0),
            out_channels=256,
            featmap_strides=[4, 8, 16, 32]),
        bbox_head=dict(
            type='Shared4Conv1FCBBoxHead',
            in_channels=256,
            conv_out_channels=256,
            fc_out_channels=1024,
            norm_cfg=norm_cfg,
            roi_feat_size=7,
            num_classes=80,
            bbox_coder=dict(type='DeltaXYWHBBoxCoder', target_means=[0.0] * 4, target_stds=[0.1, 0.1, 0.2, 0.2]),
            reg_class_agnostic=False,
            loss_cls=dict(type='CrossEntropyLoss', use_sigmoid=False, loss_weight=1.0),
            loss_bbox=dict(type='L1Loss', loss_weight=1.0)),
        mask_roi_extractor=dict(
            type='SingleRoIExtractor',
            roi_layer=dict(type='RoIAlign', output_size=14, sampling_ratio=0),
            out_channels=256,
            featmap_strides=[4, 8, 16, 32]),
        mask_head=dict(
            type='FCNMaskHead',
            num_convs=4,
            in_channels=256,
            conv_out_channels=256,
            norm_cfg=norm_cfg,
            num_classes=80,
            loss_mask=dict(type='CrossEntropyLoss', use_mask=True, loss_weight=1.0))),
    train_cfg=dict(
        rpn=dict(
            assigner=dict(type='MaxIoUAssigner', pos_iou_thr=0.7, neg_iou_thr=0.3, min_pos_iou=0.3,
                          match_low_quality=True, ignore_iof_thr=-1),
            sampler=dict(type='RandomSampler', num=256, pos_fraction=0.5, neg_pos_ub=-1,
                         add_gt_as_proposals=False),
            allowed_border=-1,
            pos_weight=-1,
            debug=False),
        rpn_proposal=dict(nms_pre=2000, max_per_img=1000, nms=dict(type='nms', iou_threshold=0.7),
                          min_bbox_size=0),
        rcnn=dict(
            assigner=dict(type='MaxIoUAssigner', pos_iou_thr=0.5, neg_iou_thr=0.5, min_pos_iou=0.5,
                          match_low_quality=True, ignore_iof_thr=-1),
            sampler=dict(type='RandomSampler', num=512, pos_fraction=0.25, neg_pos_ub=-1,
                         add_gt_as_proposals=True),
            mask_size=28,
            pos_weight=-1,
            debug=False)),
    test_cfg=dict(
        rpn=dict(nms_pre=1000, max_per_img=1000, nms=dict(type='nms', iou_threshold=0.7), min_bbox_size=0),
        rcnn=dict(score_thr=0.05, nms=dict(type='nms', iou_threshold=0.5), max_per_img=100,
                  mask_thr_binary=0.5)))
