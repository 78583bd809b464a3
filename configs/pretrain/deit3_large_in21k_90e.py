# DeiT III ViT-L, supervised on ImageNet-21k for 90 epochs at 224 (deit3_base_in21k_90e.py) with drop path 0.3
# (thesis Table 6.14, for 90 epochs), the start of the ViT-L† row of Table 6.12.
#   python tools/train.py configs/pretrain/deit3_large_in21k_90e.py --amp
_base_ = ['./deit3_base_in21k_90e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.3))
experiment = dict(backbone='deit3_large_patch16_224', backbone_overrides=dict(drop_path_rate=0.3))
