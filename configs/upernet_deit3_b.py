# UperNet + DeiT III ViT-B/16 on ADE20k under the thesis' protocol (configs/_base_/protocols/upernet_xcit160k.py:
# XCiT's UperNet, 160k iterations, 512 crops, batch 16 = 8 GPUs x 2, whole-image single-scale test).
# Thesis Table 6.12: 127.7M parameters, 49.3 mIoU single-scale, 50.2 multi-scale, with the ViT-B trained "400
# epochs ... for ImageNet-1k models" at 224 (§6.3.5.2) — not the 800-epoch model trained at 192 px that the
# released deit_3_base_224_1k.pth is.
#   python tools/train.py configs/upernet_deit3_b.py                    # single-scale val every 16k iters
#   python tools/test.py configs/upernet_deit3_b.py work_dirs/upernet_deit3_b/iter_160000.pth --tta  # MS+flip
_base_ = ['./_base_/protocols/upernet_xcit160k.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/deit3_base_in1k_400e.py`. Another file
# (e.g. an official release) is another experiment: pass `--checkpoint PATH`; result.json records its origin.
# It is loaded when training starts; a missing file stops the run there.
checkpoint = 'work_dirs/deit3_base_in1k_400e/backbone.pth'

model = dict(backbone=dict(
    arch='deit3_base_patch16_224', drop_path_rate=0.1,
    init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))

# What result.json records; `pretrain` comes from the checkpoint's own metadata.
experiment = dict(task='seg', dataset='ade20k', backbone='deit3_base_patch16_224', eval='ss')
