# CaiT-S-36 (cait_s36_224), ImageNet-1k, 400 epochs at 224 with hard distillation from a RegNetY-16GF
# (Touvron et al., ICCV 2021, §4.3 and Table 3; thesis §3.7, Table 3.16): the recipe of
# configs/_base_/imagenet_cait_400e.py (AdamW 1e-3, batch 1024, weight decay 0.05, cosine, 5 warm-up
# epochs, DeiT augmentation, repeated augmentation, test crop ratio 1.0).
# Drop path 0.2 (CaiT Table 3 and thesis Table 3.16 agree). LayerScale epsilon 1e-6: the variant cait_s36_224.
# Expected: 84.0 top-1 / 88.9 ReaL / 74.1 V2 with distillation (CaiT Table 3 "@224Υ"; ReaL and V2: thesis
# Table 3.22, crop 1.0), 83.3 / 88.0 / 72.5 without ("@224"; thesis Table 3.17).
#   python tools/train.py configs/pretrain/cait_s36_in1k_400e.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['../_base_/imagenet_cait_400e.py']

model = dict(backbone=dict(type='vitbench.CaiT', arch='cait_s36_224', drop_path_rate=0.2))
experiment = dict(backbone='cait_s36_224', backbone_overrides=dict(drop_path_rate=0.2))
