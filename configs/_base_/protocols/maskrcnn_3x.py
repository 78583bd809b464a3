# Protocol maskrcnn_3x: Mask R-CNN on COCO with the "3x" schedule (36 epochs at batch 16, multi-scale training with
# the shorter side 480-800), as the PatchConvNet thesis chapter compares with Swin and XCiT (Touvron, PhD thesis
# 2022, §5.3.3, Table 5.6: "the commonly used x3 schedule"). Values from facebookresearch/xcit
# detection/configs/xcit/mask_rcnn_xcit_small_12_p16_3x_coco.py and its bases (audited value by value from the
# built optimiser and the resolved pipelines: tests/protocol_audit/detection.yaml):
# - AdamW lr 1e-4, weight decay 0.05, no layer-wise decay; no weight decay on parameters named `norm` (XCiT's
#   custom_keys), biases and the class token decayed, as there; 500 warm-up iterations (x 0.001), lr x0.1 at
#   epochs 27 and 33; mini-val;
# - flip, then one of XCiT's two AutoAugment branches (multi-scale resize, or resize-crop-resize); test: shorter
#   side 800.
# Deliberate differences: no weight decay on `pos_embed` (XCiT's key is Swin's `absolute_pos_embed`, which names
# no parameter of a plain ViT; the config's comment says "no weight decay for position embedding"); the suite's
# simple feature pyramid and LayerNorm heads (mask_rcnn_vitdet.py) on the trunk's last map (XCiT's FPN reads four
# maps of its trunk; the thesis describes neither for a non-pyramidal model). Head rule (`heads`, for every run,
# --backbone or not; downstream/head_rule.py): 256 channels and a 1024-wide box fc for every backbone, as Swin's
# and XCiT's mmdet Mask R-CNN (FPN out_channels=256, Shared2FCBBoxHead fc_out_channels=1024).
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where XCiT's detection config trains
# with apex fp16 (`use_fp16=True`).
_base_ = ['../models/mask_rcnn_vitdet.py', '../datasets/coco_instance_ms3x.py', '../schedules/det_3x.py',
          '../det_runtime.py']

optim_wrapper = dict(
    _delete_=True,
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-4, betas=(0.9, 0.999), weight_decay=0.05),
    # '.ln.': the LayerNorms of the suite's heads, which XCiT's heads do not have, undecayed as its norms
    paramwise_cfg=dict(custom_keys={'pos_embed': dict(decay_mult=0.), 'norm': dict(decay_mult=0.),
                                    '.ln.': dict(decay_mult=0.)}))

experiment = dict(protocol=dict(name='maskrcnn_3x', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'train_pipeline',
    'test_pipeline'], heads=dict(pyramid=256, box_fc=1024)))
