# ResMLP-S36, supervised on ImageNet-1k: the backbone of thesis Table 4.6's "ResMLP-36" row (39.1 mIoU with
# UperNet), which the thesis trains as its other ResMLPs (§4.3.1). The ResMLP-S24 recipe
# (configs/pretrain/resmlp_24_in1k.py: LAMB 5e-3, weight decay 0.2, 400 epochs, the DeiT defaults) on the 36-block
# model, LayerScale 1e-6 (the CaiT rule at depth 36, the variant's). Its ImageNet top-1 is not in the thesis.
#   python tools/train.py configs/pretrain/resmlp_36_in1k.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['./resmlp_24_in1k.py']

model = dict(backbone=dict(arch='resmlp_36'))
experiment = dict(backbone='resmlp_36')
