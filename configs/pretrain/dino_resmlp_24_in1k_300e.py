# ResMLP-S24 pre-trained with DINO (thesis §4.3.3, Table 4.2: 300 epochs; linear / k-NN 72.8 / 69.4 on
# ImageNet-1k val; fine-tuned with labels, Table 4.3: 79.9 top-1), the official DINO recipe (configs/_base_/dino_in1k.py).
# The thesis states no crops: ResMLP's cross-patch layers take exactly the 14x14 grid it is built for, so the
# 96 px local crops of ViTs cannot go through it; this config keeps the 2 global 224 crops (DINO's "2x224"
# setting). local_size=224 with local_crops_number=N gives N more crops at the local scales.
#   python tools/train.py configs/pretrain/dino_resmlp_24_in1k_300e.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['../_base_/dino_in1k.py']

max_epochs = 300
local_crops_number = 0
model = dict(backbone=dict(type='vitbench.ResMLP', arch='resmlp_24'))
train_pipeline = [dict(type='LoadImage'), dict(type='MultiView', views={{_base_.global_views}}), dict(type='PackInputs')]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-9, by_epoch=True, begin=0, end=10, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=10, end=max_epochs, convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)

experiment = dict(task='pretrain', dataset='imagenet', backbone='resmlp_24', backbone_overrides=dict(drop_path_rate=0.1),
                  pretrain=dict(recipe='dino', epochs=max_epochs, checkpoint=None))
