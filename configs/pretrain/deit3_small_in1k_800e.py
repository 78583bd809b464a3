# DeiT III ViT-S, supervised on ImageNet-1k for 800 epochs: the ViT-B recipe (deit3_base_in1k_800e.py) with
# LAMB 4e-3 (the ViT-Ti/S rate of "Three things", §2.2) and drop path 0.1 (0.0 at 400 epochs, thesis
# Table 6.14, +0.05 per 200 epochs). Expected: 81.4 top-1 at 224 (thesis Tables 6.7 / 6.15).
_base_ = ['./deit3_base_in1k_800e.py']

model = dict(backbone=dict(arch='deit3_small_patch16_224', drop_path_rate=0.1))
optim_wrapper = dict(optimizer=dict(lr=4e-3))
experiment = dict(backbone='deit3_small_patch16_224', backbone_overrides=dict(drop_path_rate=0.1))
