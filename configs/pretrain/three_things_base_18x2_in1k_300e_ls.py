# "Three things" (Touvron et al., ECCV 2022) parallel ViT-B18x2: Table 2's 300 epochs *with* LayerScale (init 1e-4,
# the deit3_* variants' own), the cell between the paper's two baselines (§2.2: 300 epochs without, 400 with):
# three_things_base_18x2_in1k_300e.py with LayerScale kept.
# Expected: 83.8 top-1 / 73.3 ImageNet-V2 (Table 2, parallel ViT-B18x2, 300 epochs, LayerScale).
#   python tools/train.py configs/pretrain/three_things_base_18x2_in1k_300e_ls.py --amp
_base_ = ['./three_things_base_18x2_in1k_300e.py']

model = dict(backbone=dict(init_values=1e-4))
experiment = dict(backbone_overrides=dict(_delete_=True, drop_path_rate=0.1))
