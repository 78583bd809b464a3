# UperNet + PatchConvNet-B120 on ADE20k: the S60 protocol (upernet_patchconvnet_s60.py) with the 768-wide,
# 120-block trunk. Thesis Table 5.3 (IN-1k pre-training): 229.8M parameters (whole classifier counted; this
# model has 223.2M without the pooling stage and classifier), 1550 GFLOPs, 49.4 mIoU single-scale, 50.3
# multi-scale; IN-21k pre-training (†): 51.9 / 52.8.
_base_ = ['./upernet_patchconvnet_s60.py']

# Backbone weights: the official B120 ImageNet-1k release (facebookresearch/deit, PatchConvNet models; a dict
# with key 'model'), saved under this name, or any supported file via `--checkpoint PATH`.
checkpoint = 'checkpoints/patchconvnet_b120_224_1k.pth'

# drop path: B120's ImageNet rate (0.4, Table 5.8) minus 0.1, the thesis' rule for fine-tuning
model = dict(
    backbone=dict(arch='patchconvnet_b120', out_indices=[119, 119, 119, 119], drop_path_rate=0.3,
                  init_cfg=dict(checkpoint=checkpoint)),
    neck=dict(embed_dim=768),
    decode_head=dict(in_channels=[768, 768, 768, 768]),
    auxiliary_head=dict(in_channels=768))

experiment = dict(backbone='patchconvnet_b120',
                  pretrain=dict(recipe='supervised', epochs=400, checkpoint=checkpoint))
