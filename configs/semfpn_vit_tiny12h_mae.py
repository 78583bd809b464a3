# Semantic FPN + MAE-lite's ViT-Tiny (192 wide, 12 heads), MAE-pretrained, on ADE20k under MAE-lite's own ADE20k
# protocol (configs/_base_/protocols/semfpn_maelite160k.py, from wangsr126/MAE-Lite
# projects/eval_tools/seg/configs/sem_fpn/semantic_fpn_t_160k.py): blocks 3/5/7/11 narrowed to 48 channels by
# the x0.25 Feature2Pyramid, a 128-channel FPNHead; AdamW 1e-4, layer decay 0.8, 160k iterations at batch 16.
# The same protocol covers MAE-lite's other Tiny inits (DeiT-Tiny, MoCo-v3, distilled MAE): --checkpoint PATH, as
# configs/pipelines/paper_maelite.py runs them; the distilled one also as configs/semfpn_vit_tiny12h_dmae.py.
#   python tools/train.py configs/semfpn_vit_tiny12h_mae.py --amp
_base_ = ['./_base_/protocols/semfpn_maelite160k.py']

# Backbone weights: the export of `python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k_400e.py`.
checkpoint = 'work_dirs/mae_vit_tiny12h_in1k_400e/backbone.pth'

model = dict(
    backbone=dict(arch='vit_tiny12h_patch16_224', init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    neck=dict(embed_dim=192),
    decode_head=dict(in_channels=[48, 48, 48, 48], channels=128))

experiment = dict(task='seg', dataset='ade20k', backbone='vit_tiny12h_patch16_224', eval='ss')
