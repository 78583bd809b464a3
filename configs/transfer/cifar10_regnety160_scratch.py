# CIFAR-10 from scratch, RegNetY-16GF (timm's regnety_160, no pre-training): the teacher of thesis Table 3.7's
# distilled DeiT-B trained on CIFAR-10 alone (§3.4.4, beside the table): the DeiT transfer recipe of
# cifar10_deit3_s.py at the ImageNet recipe's lr 1e-3 (batch 1024) for 7200 epochs at 224, from random weights.
# Expected: 98.0 top-1 (thesis Table 3.7, "RegNetY-16GF, CIFAR-10 from scratch").
# Unlike the other transfer configs it exports its model (work_dir/backbone.pth: the RegNetY with its 10-class
# classifier, in the suite's format that names timm:regnety_160), the teacher file that
# configs/transfer/cifar10_deit_base_distilled_scratch.py distils from (tools/train.py --teacher PATH).
#   python tools/train.py configs/transfer/cifar10_regnety160_scratch.py --amp
_base_ = ['./cifar10_deit3_s.py']

model = dict(backbone=dict(_delete_=True, type='vitbench.TimmBackbone', arch='timm:regnety_160', init_cfg=None))
optim_wrapper = dict(optimizer=dict(lr=1e-3))
train_cfg = dict(max_epochs=7200)
custom_hooks = [dict(type='TransferCheckHook'), dict(type='BackboneExportHook')]

experiment = dict(backbone='timm:regnety_160')
