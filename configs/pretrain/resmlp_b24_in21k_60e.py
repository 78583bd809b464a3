# ResMLP-B24/8 (the variant resmlp_b24: 8x8 patches) supervised on ImageNet-21k for 60 epochs, the first stage of
# thesis Table 4.3's best row ("pre-trained ImageNet-21k (60 epochs)": 84.4 top-1 / 88.9 ReaL / 74.2 V2 after the
# ImageNet-1k fine-tune, configs/finetune/resmlp_b24_in21k_ft_in1k.py). The thesis gives the length only: the
# rest is the suite's ImageNet-21k recipe (configs/pretrain/deit3_base_in21k_240e.py: LAMB 1e-3, weight decay 0.02,
# 3-Augment, CutMix, label smoothing 0.1, batch 2048, 5 warm-up epochs then cosine) with ResMLP's drop path 0.1.
#   python tools/train.py configs/pretrain/resmlp_b24_in21k_60e.py --amp   (data: pretrain/imagenet21k.py)
_base_ = ['./deit3_base_in21k_240e.py']

max_epochs = 60
model = dict(backbone=dict(_delete_=True, type='vitbench.ResMLP', arch='resmlp_b24', drop_path_rate=0.1))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)
experiment = dict(backbone='resmlp_b24', pretrain=dict(epochs=max_epochs))
