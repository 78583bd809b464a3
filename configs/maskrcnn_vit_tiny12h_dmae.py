# Mask R-CNN + MAE-lite's ViT-Tiny pretrained with distilled MAE (MAE-Base teacher) on COCO: the MAE-Tiny
# protocol (640 LSJ, 100 epochs) unchanged. MAE-lite reports 42.3 box / 37.4 mask AP with its code (42.7 /
# 38.2 in the paper, Table 5: +3.8 box AP over MAE-Tiny).
_base_ = ['./maskrcnn_vit_tiny12h_mae.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/dmae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/dmae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
