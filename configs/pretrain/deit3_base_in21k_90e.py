# DeiT III ViT-B, supervised on ImageNet-21k for 90 epochs at 224: the thesis' default ImageNet-21k schedule
# ("IN-21k: 90 epochs pre-training at 224", §6.3.1; drop path 0.1, Table 6.14's for 90 epochs), the one its
# downstream † rows start from ("90 epochs for ImageNet-21k models", §6.3.5.2, Table 6.12). Everything else is
# the 240-epoch recipe of the released weights (deit3_base_in21k_240e.py). Then the 50-epoch ImageNet-1k
# fine-tune, configs/finetune/deit3_base_in21k_90e_ft_in1k.py, and UperNet, configs/upernet_deit3_b_in21k.py.
#   python tools/train.py configs/pretrain/deit3_base_in21k_90e.py --amp   (data: pretrain/imagenet21k.py)
# deit3_large_in21k_90e.py derives from this file.
_base_ = ['./deit3_base_in21k_240e.py']

max_epochs = 90
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
experiment = dict(pretrain=dict(epochs=max_epochs))
