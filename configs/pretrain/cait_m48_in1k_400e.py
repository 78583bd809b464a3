# CaiT-M-48 (cait_m48_224), ImageNet-1k, 400 epochs at 224 with hard distillation from a RegNetY-16GF
# (Touvron et al., ICCV 2021, §4.3 and Table 3; thesis §3.7, Table 3.16): the recipe of
# configs/_base_/imagenet_cait_400e.py (AdamW 1e-3, batch 1024, weight decay 0.05, cosine, 5 warm-up
# epochs, DeiT augmentation, repeated augmentation, test crop ratio 1.0).
# Drop path 0.4: thesis Table 3.16 (the only source with M-48; the CaiT paper's Table 3 stops at
# M-36). LayerScale epsilon 1e-6: the variant cait_m48_224.
# Expected: no 224 number is published for M-48; the thesis reports M-48↑448Υ (fine-tuned at 448) at
# 86.5 top-1 / 90.2 ReaL / 76.9 V2 (Table 3.17).
#   python tools/train.py configs/pretrain/cait_m48_in1k_400e.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['../_base_/imagenet_cait_400e.py']

model = dict(backbone=dict(type='vitbench.CaiT', arch='cait_m48_224', drop_path_rate=0.4))
experiment = dict(backbone='cait_m48_224', backbone_overrides=dict(drop_path_rate=0.4))
