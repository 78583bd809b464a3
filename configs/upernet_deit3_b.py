# UperNet + DeiT III ViT-B/16 on ADE20k, 512x512 crops, 160k iterations, batch 16 (8 GPUs x 2).
# Thesis Table 6.12: 127.7M parameters, 49.3 mIoU single-scale, 50.2 multi-scale (IN-1k pretraining).
#   python tools/train.py configs/upernet_deit3_b.py                    # single-scale val every 16k iters
#   python tools/test.py configs/upernet_deit3_b.py work_dirs/upernet_deit3_b/iter_160000.pth --tta  # MS+flip
_base_ = [
    './_base_/models/upernet_vit.py', './_base_/datasets/ade20k.py',
    './_base_/schedules/seg_160k.py', './_base_/seg_runtime.py',
]

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_base_in1k_800e.py`.
# Any supported file works (e.g. the official deit_3_base_224_1k.pth): edit this line or pass
# `--checkpoint PATH`. It is loaded when training starts; a missing file stops the run there.
checkpoint = 'work_dirs/deit3_base_in1k_800e/backbone.pth'

model = dict(backbone=dict(
    arch='deit3_base_patch16_224', drop_path_rate=0.1,
    init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))

# What result.json records; `pretrain` comes from the checkpoint's own metadata.
experiment = dict(task='seg', dataset='ade20k', backbone='deit3_base_patch16_224', eval='ss')
