# UperNet + PatchConvNet-S60 on ADE20k, 512x512 crops, 160k iterations at batch 16 (8 GPUs x 2), the trunk's
# last map at every level. Thesis Table 5.3 (IN-1k pre-training): 57.1M parameters (the whole classifier
# counted; this model has 55.2M: the attention-based pooling and the classifier are not built), 952 GFLOPs,
# 46.0 mIoU single-scale, 46.9 multi-scale; IN-21k pre-training (†): 48.4 / 49.3.
#   python tools/train.py configs/upernet_patchconvnet_s60.py                    # single-scale val
#   python tools/test.py configs/upernet_patchconvnet_s60.py work_dirs/upernet_patchconvnet_s60/iter_160000.pth --tta
_base_ = [
    './_base_/models/upernet_patchconvnet.py', './_base_/datasets/ade20k.py',
    './_base_/schedules/seg_160k_swin.py', './_base_/seg_runtime.py',
]

# Backbone weights: the export of `python tools/train.py configs/pretrain/patchconvnet_s60_in1k.py`. The
# official S60 release (facebookresearch/deit, a dict with key 'model') loads as it is: edit this line or
# pass `--checkpoint PATH`.
checkpoint = 'work_dirs/patchconvnet_s60_in1k/backbone.pth'

# drop path: the ImageNet rate of S60 (0.15, Table 5.8) minus 0.1, the thesis' rule for fine-tuning
model = dict(backbone=dict(arch='patchconvnet_s60', drop_path_rate=0.05,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))

experiment = dict(task='seg', dataset='ade20k', backbone='patchconvnet_s60', eval='ss')
