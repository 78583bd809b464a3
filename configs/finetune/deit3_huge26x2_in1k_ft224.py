# DeiT III ViT-H-26x2 (deit3_huge_patch14_26x2, 26 layers of 2 parallel branches, about 1B parameters): the 20-epoch
# fine-tune at 224 of thesis Table 6.6, from configs/pretrain/deit3_huge26x2_in1k_400e.py trained at 126 px: the
# ViT-H fine-tune (deit3_huge_in1k_ft224.py: AdamW 1e-5 at batch 512, weight decay 0.1, drop path 0.55) with this
# backbone. Position embeddings: 9x9 -> 16x16 at load.
# Expected: 84.9 top-1 / ReaL 89.2 / V2 75.6 (thesis Table 6.6; its second row of this setting: 84.9 / 89.1 / 75.3).
#   python tools/train.py configs/finetune/deit3_huge26x2_in1k_ft224.py --amp --checkpoint PATH
_base_ = ['./deit3_huge_in1k_ft224.py']

checkpoint = 'work_dirs/deit3_huge26x2_in1k_400e/backbone.pth'
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_huge_patch14_26x2', drop_path_rate=0.55,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='deit3_huge_patch14_26x2')
