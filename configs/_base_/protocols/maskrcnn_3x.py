# Protocol maskrcnn_3x: Mask R-CNN on COCO with the "3x" schedule (36 epochs at batch 16, multi-scale training with
# the shorter side 480-800), as the PatchConvNet thesis chapter compares with Swin and XCiT (Touvron, PhD thesis
# 2022, §5.3.3, Table 5.6: "the commonly used x3 schedule"; Swin's / XCiT's mmdet configs): AdamW lr 1e-4, weight
# decay 0.05, no layer-wise decay, 500 warm-up iterations, lr x0.1 at epochs 27 and 33; mini-val. The suite's
# simple feature pyramid and LayerNorm heads (mask_rcnn_vitdet.py) on the trunk's last map: the thesis describes
# neither. Head rule (`heads`, for every run, --backbone or not; downstream/head_rule.py): 256 channels and a
# 1024-wide box fc for every backbone, as Swin's and XCiT's mmdet Mask R-CNN (FPN out_channels=256,
# Shared2FCBBoxHead fc_out_channels=1024).
_base_ = ['../models/mask_rcnn_vitdet.py', '../datasets/coco_instance_ms3x.py', '../schedules/det_3x.py',
          '../det_runtime.py']

experiment = dict(protocol=dict(name='maskrcnn_3x', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_iters', 'train_dataloader.batch_size', 'train_pipeline',
    'test_pipeline'], heads=dict(pyramid=256, box_fc=1024)))
