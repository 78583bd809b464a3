# Protocol maskrcnn_vitdet100e: Mask R-CNN on COCO as ViTDet (Li et al., ECCV 2022) trains a plain ViT-B, from
# detectron2 projects/ViTDet/configs/COCO/mask_rcnn_vitdet_b_100ep.py and configs/common/models/mask_rcnn_vitdet.py:
# - 1024 x 1024 large-scale jitter (0.1-2.0), batches padded to the square; test: longer side 1024;
# - windowed attention (14 x 14) with four global blocks, relative position biases (use_rel_pos), simple feature
#   pyramid, 2-conv RPN, 4conv1fc and 4-conv mask heads with LayerNorm;
# - AdamW lr 1e-4 at batch 64, weight decay 0.1, layer-wise decay 0.7, 250 warm-up iterations, 100 epochs
#   (184,375 iterations), lr x0.1 at epochs 88 and 96; weight decay as configs/common/optim.py's
#   get_default_optimizer_params(weight_decay_norm=0.0) with ViTDet's override: norms and `pos_embed` undecayed,
#   the biases of linear and conv layers and the relative position tables decayed (`decay_biases`);
# - RoI assigner IoU 0.5 without low-quality matches (mask_rcnn_fpn.py's Matcher, allow_low_quality_matches
#   False); RPN 0.3 / 0.7 with them; 256 anchors (1/2 positive) and 512 RoIs (1/4 positive) per image;
# - head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): a 256-channel pyramid, RPN and
#   RoI heads and a 1024-wide box head fc for every backbone, as ViTDet's ViT-B, -L and -H alike
#   (configs/common/models/mask_rcnn_vitdet.py: SimpleFeaturePyramid out_channels=256, box head conv_dims
#   [256] x 4 and fc_dims [1024]; mask_rcnn_fpn.py's mask head conv_dims [256] x 4).
# Deliberate differences: the DeiT III class token (detectron2's ViT has none) is kept and, as `pos_embed`, not
# decayed; LayerScale (DeiT III) is not decayed. Audited value by value from the built optimiser, model and the
# resolved pipelines: tests/protocol_audit/detection.yaml.
# MAE-lite's Tiny runs change its size and optimiser: maskrcnn_vitdet100e_maelite.py.
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where ViTDet trains with
# `train.amp.enabled = True`.
_base_ = ['../models/mask_rcnn_vitdet.py', '../datasets/coco_instance_lsj.py', '../schedules/det_100e.py',
          '../det_runtime.py']

optim_wrapper = dict(paramwise_cfg=dict(decay_biases=True))
model = dict(train_cfg=dict(rcnn=dict(assigner=dict(match_low_quality=False))))

experiment = dict(protocol=dict(name='maskrcnn_vitdet100e', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'image_size',
    'model.backbone.window_size', 'model.backbone.use_rel_pos', 'model.data_preprocessor.pad_size_divisor',
    'model.train_cfg'],
    heads=dict(pyramid=256, box_fc=1024)))
