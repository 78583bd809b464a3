# ResMLP-S12 distilled from a RegNetY-16GF (thesis Table 4.3, block "Training": 77.8 top-1 / 84.6 ReaL / 66.0 V2;
# §4.3.3 "the knowledge distillation approach of Touvron et al.", "with the same schedule", §4.3.1): the
# supervised recipe of resmlp_12_in1k.py plus DeiT's hard distillation (configs/_base_/imagenet_deit_distilled_300e.py:
# the teacher's argmax, alpha 0.5). ResMLP has no distillation token: it distils through its one head, as the
# classifier does for any backbone without one (pretrain/classifier.py). The teacher is a file the run is given:
#   python tools/train.py configs/pretrain/resmlp_12_distilled_in1k.py --amp --teacher checkpoints/regnety_160-a5fe301d.pth
_base_ = ['./resmlp_12_in1k.py']

model = dict(distillation=dict(
    teacher=dict(type='vitbench.TimmBackbone', arch='timm:regnety_160', checkpoint='checkpoints/regnety_160-a5fe301d.pth'),
    kind='hard', alpha=0.5))
experiment = dict(pretrain=dict(recipe='supervised_distilled'))
