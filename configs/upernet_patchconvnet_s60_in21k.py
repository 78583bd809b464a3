# UperNet + PatchConvNet-S60 with ImageNet-21k pre-training on ADE20k: thesis Table 5.3 "Ours-S60†", 48.4 mIoU
# single-scale, 49.3 multi-scale; the upernet_xcit160k protocol of upernet_patchconvnet_s60.py.
# Decision: the UperNet starts from the 90-epoch ImageNet-21k model itself (configs/pretrain/patchconvnet_s60_in21k_90e.py),
# as the caption reads ("pre-trained on ImageNet-21k") and as the table's Swin-B† starts from Swin's ImageNet-22k
# model; the thesis does not say whether an ImageNet-1k fine-tune comes between. For that other reading (the one
# DeiT III's † UperNets take, upernet_deit3_b_in21k.py): `--checkpoint work_dirs/patchconvnet_s60_in21k_ft_in1k/backbone.pth`.
#   python tools/train.py configs/pretrain/patchconvnet_s60_in21k_90e.py --amp
#   python tools/train.py configs/upernet_patchconvnet_s60_in21k.py
# B60† / B120† / L120†: --backbone patchconvnet_b60 with the fine-tuning drop path (Table 5.8's minus 0.1) after
# the ImageNet-21k pre-training of that size: the map's Table 5.3 rows give each (tools/pipeline.py --table thesis:5.3).
_base_ = ['./upernet_patchconvnet_s60.py']

checkpoint = 'work_dirs/patchconvnet_s60_in21k_90e/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
