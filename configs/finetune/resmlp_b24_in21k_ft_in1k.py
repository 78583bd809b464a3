# ResMLP-B24/8 pre-trained on ImageNet-21k (configs/pretrain/resmlp_b24_in21k_60e.py), fine-tuned on ImageNet-1k at
# 224: thesis Table 4.3, 84.4 top-1 / 88.9 ReaL / 74.2 V2. The thesis gives no fine-tuning recipe: the suite's
# ImageNet-21k -> 1k fine-tune (configs/finetune/deit3_base_in21k_ft_in1k.py: 50 epochs, LAMB 3e-4, weight decay
# 0.02, 3-Augment, CutMix) on the ResMLP, drop path 0.1 as the family's recipe. Its records carry the checkpoint's
# label ('supervised (imagenet21k)', 60 epochs).
#   python tools/train.py configs/finetune/resmlp_b24_in21k_ft_in1k.py --amp
_base_ = ['./deit3_base_in21k_ft_in1k.py']

checkpoint = 'work_dirs/resmlp_b24_in21k_60e/backbone.pth'
model = dict(backbone=dict(_delete_=True, type='vitbench.ResMLP', arch='resmlp_b24', drop_path_rate=0.1,
                           init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(backbone='resmlp_b24', backbone_overrides=dict(drop_path_rate=0.1))
