# DeiT III ViT-L: the 50-epoch ImageNet-1k fine-tune (configs/finetune/deit3_large_in21k_ft_in1k.py) of the
# 90-epoch ImageNet-21k model (configs/pretrain/deit3_large_in21k_90e.py), for configs/upernet_deit3_l_in21k.py.
#   python tools/train.py configs/finetune/deit3_large_in21k_90e_ft_in1k.py --amp
_base_ = ['./deit3_large_in21k_ft_in1k.py']

checkpoint = 'work_dirs/deit3_large_in21k_90e/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
