# Mask R-CNN + PatchConvNet-S60 on COCO, 3x schedule (36 epochs at batch 16), multi-scale training (shorter
# side 480-800), as the thesis' Table 5.6 compares it with Swin and XCiT: "as our approach is not pyramidal, we
# only use the final output of our network in Mask R-CNN". That stride-16 map is rescaled 4x / 2x / 1x / 0.5x
# into the pyramid by the suite's simple feature pyramid (ViTDet's, 256 channels, + a max-pooled level), with
# the suite's Mask R-CNN heads (mask_rcnn_vitdet.py: 2-conv RPN, 4conv1fc + 4-conv mask heads with LN): the
# thesis does not describe its neck and heads. Thesis Table 5.6 (IN-1k pre-training, mini-val): 44.9M
# parameters, 264 GFLOPs, box AP 46.4 (AP50 67.8, AP75 50.8), mask AP 41.3 (AP50 64.8, AP75 44.2); S120:
# 67.4M, box 47.0, mask 41.9.
#   python tools/train.py configs/maskrcnn_patchconvnet_s60.py --amp   (8 GPUs: torchrun ... --launcher pytorch)
_base_ = ['./_base_/protocols/maskrcnn_3x.py']  # Table 5.6's protocol

# Backbone weights: the export of `python tools/train.py configs/pretrain/patchconvnet_s60_in1k.py`. The
# official S60 release (facebookresearch/deit, a dict with key 'model') loads as it is: edit this line or
# pass `--checkpoint PATH`. It is loaded when training starts; a missing file stops the run there.
checkpoint = 'work_dirs/patchconvnet_s60_in1k/backbone.pth'

model = dict(
    data_preprocessor=dict(pad_size_divisor=32),  # images of varying sizes: pad each batch to a multiple of 32
    backbone=dict(
        _delete_=True,
        type='vitbench.PatchConvNet',
        arch='patchconvnet_s60',
        out_indices=[59],
        final_norm=False,  # the raw trunk; the pyramid normalises
        drop_path_rate=0.05,  # S60's ImageNet rate (0.15, Table 5.8) minus 0.1, the thesis' fine-tuning rule
        init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(in_channels=384, scales=[4.0, 2.0, 1.0, 0.5]))  # patch 16 -> strides 4, 8, 16, 32 (+ 64)

experiment = dict(task='det', dataset='coco', backbone='patchconvnet_s60', eval='ss')
