# The DeiT recipe (./imagenet_deit_300e.py) with distillation from the DeiT teacher, a RegNetY-16GF (82.9 top-1,
# thesis §3.3): the official DeiT checkpoint, a timm 'regnety_160' state dict
# (https://dl.fbaipublicfiles.com/deit/regnety_160-a5fe301d.pth) saved under checkpoints/, frozen, in eval mode.
# Default: hard distillation (thesis Eq. 3.3; official --distillation-type hard): loss = 1/2 CE(class head,
# smoothed labels) + 1/2 CE(distillation head, teacher argmax); a backbone without a distillation token distils
# through its class head. Soft-distillation configs set kind='soft', alpha (lambda) 0.1, tau 3.0 (Eq. 3.2).
_base_ = ['./imagenet_deit_300e.py']

model = dict(
    distillation=dict(
        teacher=dict(type='vitbench.TimmBackbone', arch='timm:regnety_160',
                     checkpoint='checkpoints/regnety_160-a5fe301d.pth'),
        kind='hard', alpha=0.5))
experiment = dict(pretrain=dict(recipe='supervised_distilled'))
