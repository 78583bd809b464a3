# DeiT III ViT-T, supervised on ImageNet-1k for 400 epochs at 224: the ViT-B recipe (deit3_base_in1k_400e.py,
# thesis Table 6.1 "Ours IN-1k") with drop path 0.0 (thesis Table 6.14) and LAMB 4e-3 ("Three things", §2.2: 4e-3
# for ViT-Ti and ViT-S, 3e-3 for ViT-B and ViT-L; Table 6.1 prints one rate, 3e-3).
# Expected: no ImageNet number of this recipe is published for ViT-T (the thesis uses it in Tables 6.12 and 6.14
# only); the closest is "Three things" Table 1, ViT-Ti 400 epochs + LayerScale with RandAugment: 73.5 top-1 / V2 61.4.
#   python tools/train.py configs/pretrain/deit3_tiny_in1k_400e.py --amp
_base_ = ['./deit3_base_in1k_400e.py']

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_tiny_patch16_224', drop_path_rate=0.0))
optim_wrapper = dict(optimizer=dict(lr=4e-3))
experiment = dict(backbone='deit3_tiny_patch16_224', backbone_overrides=dict(drop_path_rate=0.0))
