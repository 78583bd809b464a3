# UperNet + DeiT III ViT-L/16 with ImageNet-21k pre-training on ADE20k: thesis Table 6.12 "DeiT III ViT-L†" at 224,
# 53.8 mIoU single-scale, 54.7 multi-scale; upernet_deit3_l.py from the 90-epoch ImageNet-21k model fine-tuned on
# ImageNet-1k (the decision of upernet_deit3_b_in21k.py).
#   python tools/train.py configs/pretrain/deit3_large_in21k_90e.py --amp
#   python tools/train.py configs/finetune/deit3_large_in21k_90e_ft_in1k.py --amp
#   python tools/train.py configs/upernet_deit3_l_in21k.py
_base_ = ['./upernet_deit3_l.py']

checkpoint = 'work_dirs/deit3_large_in21k_90e_ft_in1k/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
