# CIFAR-10 from scratch, DeiT-B⚗ (deit_base_distilled_patch16_224, no pre-training) with hard distillation from a
# RegNetY-16GF trained on CIFAR-10 itself (thesis §3.4.4, Table 3.7: 98.5 top-1; the teacher: 98.0, DeiT-B without
# distillation: 97.5): the DeiT transfer recipe of cifar10_deit3_s.py at the ImageNet recipe's lr 1e-3 (batch
# 1024) for 7200 epochs at 224, with DeiT's distillation (configs/_base_/imagenet_deit_distilled_300e.py: hard,
# alpha 0.5; inference the mean of the two heads' logits, as the official code).
# The teacher is the model configs/transfer/cifar10_regnety160_scratch.py exports (its backbone.pth names
# timm:regnety_160 and holds the 10-class classifier); the default path is that config's default work_dir.
# Expected: 98.5 top-1 (thesis Table 3.7, "DeiT-B⚗, CIFAR-10 from scratch").
#   python tools/train.py configs/transfer/cifar10_regnety160_scratch.py --amp
#   python tools/train.py configs/transfer/cifar10_deit_base_distilled_scratch.py --amp \
#       --teacher work_dirs/cifar10_regnety160_scratch/backbone.pth
#   (or both: python tools/pipeline.py --table thesis:3.7, which trains the teacher first)
_base_ = ['./cifar10_deit3_s.py']

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='deit_base_distilled_patch16_224', init_cfg=None),
    distill_inference='logit_mean',
    distillation=dict(teacher=dict(checkpoint='work_dirs/cifar10_regnety160_scratch/backbone.pth'),
                      kind='hard', alpha=0.5))
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=7200)

experiment = dict(backbone='deit_base_distilled_patch16_224')
