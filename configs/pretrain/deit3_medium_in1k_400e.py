# DeiT III ViT-M (width 512, 8 heads, 12 blocks; timm deit3_medium_patch16_224), supervised on ImageNet-1k for 400
# epochs at 224: the ViT-B recipe (deit3_base_in1k_400e.py, thesis Table 6.1 "Ours IN-1k", LAMB 3e-3). Neither the
# thesis nor the paper trains ViT-M (README_revenge.md only releases a checkpoint, without its command), so its
# drop path is chosen here: 0.05, between ViT-S (0.0) and ViT-B (0.1) of thesis Table 6.14.
# Expected: no 400-epoch number is published; the released ViT-M (README_revenge.md, recipe not given) has
# 83.0 top-1 / V2 72.3.
#   python tools/train.py configs/pretrain/deit3_medium_in1k_400e.py --amp
_base_ = ['./deit3_base_in1k_400e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_medium_patch16_224', drop_path_rate=0.05))
experiment = dict(backbone='deit3_medium_patch16_224', backbone_overrides=dict(drop_path_rate=0.05))
