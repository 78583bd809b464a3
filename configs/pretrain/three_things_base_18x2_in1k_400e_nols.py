# "Three things" (Touvron et al., ECCV 2022) parallel ViT-B18x2: Table 2's 400 epochs *without* LayerScale, the cell
# between the paper's two baselines (§2.2: 300 epochs without, 400 with): three_things_base_18x2_in1k_400e.py
# with LayerScale off (init_values=None, as the 300-epoch configs).
# Expected: 83.4 top-1 / 73.1 ImageNet-V2 (Table 2, parallel ViT-B18x2, 400 epochs, no LayerScale).
#   python tools/train.py configs/pretrain/three_things_base_18x2_in1k_400e_nols.py --amp
_base_ = ['./three_things_base_18x2_in1k_400e.py']

model = dict(backbone=dict(init_values=None))
experiment = dict(backbone_overrides=dict(init_values=None))
