# Mask R-CNN + DeiT III ViT-B/16 on COCO under ViTDet's protocol (configs/_base_/protocols/maskrcnn_vitdet100e.py):
# 1024x1024 large-scale jitter, windowed attention (14x14) with global blocks 2, 5, 8, 11, relative position
# biases (zero-initialised), simple feature pyramid, 4conv1fc + LN heads, AdamW with layer decay 0.7, drop path
# 0.1, 100 epochs at batch 64 (184,375 iterations). The DeiT III papers give no COCO numbers.
#   python tools/train.py configs/maskrcnn_deit3_b.py --amp   # on 16 GPUs: torchrun ... --launcher pytorch
#   python tools/test.py configs/maskrcnn_deit3_b.py work_dirs/maskrcnn_deit3_b/iter_184375.pth
_base_ = ['./_base_/protocols/maskrcnn_vitdet100e.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_base_in1k_400e.py`.
# Any supported file works (e.g. the official deit_3_base_224_1k.pth): edit this line or pass
# `--checkpoint PATH`. It is loaded when training starts; a missing file stops the run there.
checkpoint = 'work_dirs/deit3_base_in1k_400e/backbone.pth'

model = dict(backbone=dict(
    arch='deit3_base_patch16_224', drop_path_rate=0.1,
    init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))

# What result.json records; `pretrain` comes from the checkpoint's own metadata.
experiment = dict(task='det', dataset='coco', backbone='deit3_base_patch16_224', eval='ss')
