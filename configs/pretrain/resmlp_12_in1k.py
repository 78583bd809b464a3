# ResMLP-S12, supervised on ImageNet-1k (thesis §4.3.1, Tables 4.1 and 4.3): the ResMLP-S24 recipe
# (configs/pretrain/resmlp_24_in1k.py: LAMB 5e-3, weight decay 0.2, 400 epochs, the DeiT defaults) on the 12-block
# model, LayerScale 0.1 (the CaiT rule at depth 12). Expected: 76.6 top-1 (Table 4.3). Table 4.3's S12 ablations
# are keys of this config (docs/backbones.md, ResMLP): e.g. --cfg-options model.backbone.cross_patch=mlp.
#   python tools/train.py configs/pretrain/resmlp_12_in1k.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['./resmlp_24_in1k.py']

model = dict(backbone=dict(arch='resmlp_12'))
experiment = dict(backbone='resmlp_12')
