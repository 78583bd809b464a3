# ResMLP-B24/8 (8x8 patches, 129.1M parameters: the variant resmlp_b24 as released) distilled from a RegNetY-16GF
# (thesis Table 4.3: 83.6 top-1 / 88.4 ReaL / 73.4 V2, +2.6 over B24/8 without distillation): the distillation of
# resmlp_12_distilled_in1k.py on the recipe of resmlp_b24_in1k.py at the variant's own patch size.
#   python tools/train.py configs/pretrain/resmlp_b24_distilled_in1k.py --amp --teacher checkpoints/regnety_160-a5fe301d.pth
_base_ = ['./resmlp_24_distilled_in1k.py']

model = dict(backbone=dict(arch='resmlp_b24'))
experiment = dict(backbone='resmlp_b24')
