# ResMLP-B24 (patch 16, 115.7M parameters), supervised on ImageNet-1k (thesis §4.3.1, Tables 4.1 and 4.3): the
# ResMLP-S24 recipe (configs/pretrain/resmlp_24_in1k.py) on the 768-wide model, LayerScale 1e-6 (the official
# resmlp_models.py's B24). The variant resmlp_b24 is the 8x8-patch B24/8 of Table 4.3 (129.1M): patch_size=16 here.
# Expected: 81.0 top-1 (Table 4.3); B24/8: --cfg-options model.backbone.patch_size=8 experiment.backbone_overrides.patch_size=8.
#   python tools/train.py configs/pretrain/resmlp_b24_in1k.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['./resmlp_24_in1k.py']

model = dict(backbone=dict(arch='resmlp_b24', patch_size=16))
experiment = dict(backbone='resmlp_b24', backbone_overrides=dict(drop_path_rate=0.1, patch_size=16))
