# DeiT III ViT-S, supervised on ImageNet-1k for 400 epochs at 224: the ViT-B recipe (deit3_base_in1k_400e.py,
# thesis Table 6.1 "Ours IN-1k") with drop path 0.0 (thesis Table 6.14) and LAMB 4e-3 (README_revenge.md ViT-S
# command --lr 4e-3; "Three things" §2.2: 4e-3 for ViT-Ti and ViT-S; Table 6.1 prints one rate, 3e-3).
# Expected: 80.4 top-1 / ReaL 86.1 / V2 69.7 (thesis Tables 6.4, 6.15).
#   python tools/train.py configs/pretrain/deit3_small_in1k_400e.py --amp
_base_ = ['./deit3_base_in1k_400e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.0))
optim_wrapper = dict(optimizer=dict(lr=4e-3))
experiment = dict(backbone='deit3_small_patch16_224', backbone_overrides=dict(drop_path_rate=0.0))
