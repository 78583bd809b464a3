# UperNet + MAE-lite's ViT-Tiny (192 wide, 12 heads), MAE-pretrained, on ADE20k under MAE's / BEiT's protocol
# (configs/_base_/protocols/upernet_beit160k.py) with a 192-channel head and MAE-lite's optimiser changes
# (AdamW 1e-4, layer decay 0.8, drop path 0.1).
# Not MAE-lite's own ADE20k protocol: its numbers come from Semantic FPN (wangsr126/MAE-Lite
# projects/eval_tools/seg/configs/sem_fpn/semantic_fpn_t_160k.py: FPNHead on a 0.25-scaled Feature2Pyramid, lr
# 1e-4, layer decay 0.8), which is configs/semfpn_vit_tiny12h_mae.py (protocol semfpn_maelite160k); a run of this
# config is not set beside them.
# Thesis Table 6.12, DeiT III ViT-T (supervised, another protocol) for reference: 10.9M parameters, 40.1 / 41.8.
_base_ = ['./_base_/protocols/upernet_beit160k.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='vit_tiny12h_patch16_224', drop_path_rate=0.1,
                  init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(embed_dim=192),
    decode_head=dict(in_channels=[192, 192, 192, 192], channels=192),
    auxiliary_head=dict(in_channels=192))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.8))

experiment = dict(task='seg', dataset='ade20k', backbone='vit_tiny12h_patch16_224', eval='ss')
