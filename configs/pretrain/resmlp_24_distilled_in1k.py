# ResMLP-S24 distilled from a RegNetY-16GF (thesis Table 4.3: 80.8 top-1 / 86.6 ReaL / 69.8 V2): the distillation of
# resmlp_12_distilled_in1k.py on the recipe of resmlp_24_in1k.py.
#   python tools/train.py configs/pretrain/resmlp_24_distilled_in1k.py --amp --teacher checkpoints/regnety_160-a5fe301d.pth
_base_ = ['./resmlp_24_in1k.py']

model = dict(distillation=dict(
    teacher=dict(type='vitbench.TimmBackbone', arch='timm:regnety_160', checkpoint='checkpoints/regnety_160-a5fe301d.pth'),
    kind='hard', alpha=0.5))
experiment = dict(pretrain=dict(recipe='supervised_distilled'))
