# Semantic FPN + MAE-lite's ViT-Tiny pretrained with distilled MAE (teacher MAE-Base), on ADE20k: the same
# protocol as semfpn_vit_tiny12h_mae.py (MAE-lite's semantic_fpn_t_160k_mae_d2_distill.py differs from
# semantic_fpn_t_160k.py only in its checkpoint), only the weights differ.
_base_ = ['./semfpn_vit_tiny12h_mae.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/dmae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/dmae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
