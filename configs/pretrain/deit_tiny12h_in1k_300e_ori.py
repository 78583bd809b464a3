# The 12-head ViT-Tiny from scratch with DeiT's own recipe ("ori."): 74.5 top-1 (MAE-lite, Wang et al., ICML 2023,
# Table 1 "from scratch, ori."; 72.2 with DeiT-Tiny's 3 heads). Official: playground/mae_lite/finetuning_exp.py
# (at 5bf439a) without pre-trained weights (README "Main Results", first row): deit_tiny12h_in1k_300e.py with
# DeiT's augmentation and regularisation, RandAugment m9/0.5, Mixup 0.8, CutMix 1.0, label smoothing 0.1, random
# erasing 0.25, drop path 0.1 (same optimizer, schedule, layer decay 0.85 and average pooling).
_base_ = ['./deit_tiny12h_in1k_300e.py']

model = dict(
    backbone=dict(drop_path_rate=0.1),
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(mixup_alpha=0.8, cutmix_alpha=1.0, erase_prob=0.25))
train_dataloader = dict(dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=224),
    dict(type='PackInputs'),
]))
experiment = dict(backbone_overrides=dict(drop_path_rate=0.1))
