# The Mask R-CNN COCO experiment, scaled down for a CPU: the demo COCO (tools/make_demo_data.py; 6 of the 80
# categories drawn, 800 training / 200 validation images), the 6-block demo ViT (8x8 patches) trained from
# scratch on 128x128 LSJ crops for 140 iterations of 4 images (the demo pipeline's schedule), 64-wide pyramid and
# heads (its protocol's head rule, below: 64 channels and a 256-wide box fc for every backbone, the demo ViT's own
# and any `--backbone`). Same model layout (windowed attention with global blocks, simple feature pyramid, 2-conv
# RPN, 4conv1fc + LN heads), data pipeline, metric and schedule shape as configs/maskrcnn_deit3_b.py. About 2
# CPU-minutes; box / mask AP from scratch, seed 0: 9.1 / 12.4 (19.2 / 23.6 after 200 iterations, the demo's earlier
# schedule; the supervised start's lead is about the same at both lengths: docs/demo-signal.md, seventh round).
#   python tools/make_demo_data.py --out data/demo --scale small --datasets coco
#   python tools/train.py configs/demo/maskrcnn_demo.py      # -> work_dirs/demo/maskrcnn_demo/result.json
_base_ = [
    '../_base_/models/mask_rcnn_vitdet.py', '../_base_/datasets/coco_instance_lsj.py',
    '../_base_/schedules/det_100e.py', '../_base_/det_runtime.py',
]
data_root = 'data/demo/coco/'
classes = ('person', 'car', 'stop sign', 'sports ball', 'kite', 'tv')  # the categories the demo draws
image_size = (128, 128)  # demo images are about 128 x 170
channels = 64
work_dir = 'work_dirs/demo/maskrcnn_demo'

# Backbone weights: none (from scratch). The demo pretraining export works too, e.g.
# --checkpoint work_dirs/demo/sup_demo/backbone.pth
model = dict(
    data_preprocessor=dict(pad_size_divisor=image_size[0]),
    backbone=dict(
        arch='vit_demo_patch8_64', img_size=image_size[0], out_indices=[5], drop_path_rate=0.0,
        window_size=8,  # the pretraining grid (64 / 8), as 14 = 224 / 16 for ViTDet
        global_attn_indexes=[0, 2, 3, 5], init_cfg=None),
    neck=dict(in_channels=192, out_channels=channels, scales=[2.0, 1.0, 0.5, 0.25]),  # patch 8: strides 4-32
    rpn_head=dict(
        in_channels=channels, feat_channels=channels,
        anchor_generator=dict(scales=[4])),  # 16-pixel anchors at stride 4: the demo objects are small
    roi_head=dict(
        bbox_roi_extractor=dict(out_channels=channels),
        bbox_head=dict(in_channels=channels, conv_out_channels=channels, fc_out_channels=256,
                       num_classes=len(classes)),
        mask_roi_extractor=dict(out_channels=channels),
        mask_head=dict(in_channels=channels, conv_out_channels=channels, num_classes=len(classes))),
    train_cfg=dict(
        rpn_proposal=dict(nms_pre=500, max_per_img=300),
        rcnn=dict(sampler=dict(num=64))),  # RoIs per image (512 for COCO)
    test_cfg=dict(rpn=dict(nms_pre=300, max_per_img=100)))  # at most ~10 objects per demo image

train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='RandomFlip', prob=0.5),
    dict(type='RandomResize', scale=image_size, ratio_range=(0.8, 1.25), keep_ratio=True),  # mild jitter: few iters
    dict(type='RandomCrop', crop_type='absolute_range', crop_size=image_size, recompute_bbox=True,
         allow_negative_crop=True),
    dict(type='FilterAnnotations', min_gt_bbox_wh=(1e-2, 1e-2)),
    dict(type='PackDetInputs'),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='Resize', scale=image_size, keep_ratio=True),
    dict(type='LoadAnnotations', with_bbox=True, with_mask=True),
    dict(type='PackDetInputs', meta_keys=('img_id', 'img_path', 'ori_shape', 'img_shape', 'scale_factor')),
]
train_dataloader = dict(
    batch_size=4, num_workers=1,
    dataset=dict(data_root=data_root, metainfo=dict(classes=classes), pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=8, num_workers=1,
    dataset=dict(data_root=data_root, metainfo=dict(classes=classes), pipeline=test_pipeline))
test_dataloader = val_dataloader
val_evaluator = dict(ann_file=data_root + 'annotations/instances_val2017.json')
test_evaluator = val_evaluator

max_iters = 140  # the demo pipeline's schedule (was 200; the warm-up stays 40)
# from scratch: a higher rate than the 1e-4 of fine-tuning, and no layer decay (no pretrained layers to keep)
optim_wrapper = dict(optimizer=dict(lr=5e-4, weight_decay=0.05), paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=40),
    dict(type='MultiStepLR', by_epoch=False, begin=0, end=max_iters,
         milestones=[max_iters * 24 // 27, max_iters * 26 // 27], gamma=0.1),
]
train_cfg = dict(max_iters=max_iters, val_interval=max_iters)
default_hooks = dict(logger=dict(interval=20), checkpoint=dict(interval=max_iters))

randomness = dict(seed=0)

experiment = dict(task='det', dataset='coco-demo', backbone='vit_demo_patch8_64', eval='ss',
                  protocol=dict(name='maskrcnn_demo', settings=[
                      'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size',
                      'image_size', 'model.data_preprocessor.pad_size_divisor'],
                      heads=dict(pyramid=channels, box_fc=256)))
