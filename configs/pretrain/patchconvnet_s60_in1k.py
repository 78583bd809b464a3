# PatchConvNet-S60, supervised on ImageNet-1k (thesis §5.2.3): 400 epochs, batch 2048 (8 GPUs x 256), LAMB lr
# 3e-3 ("for all models"), weight decay 0.01 (S models; 0.05 for wider ones), half-cosine schedule, label
# smoothing, RandAugment in the variant of Wightman et al. ("ResNet strikes back": 7/0.5), Mixup 0.8,
# CutMix 1.0, repeated augmentation, LayerScale, uniform stochastic depth cross-validated per model (Table 5.8:
# S20 0.0, S36 0.05, S60 0.15, S120 0.2, B36 0.2, B60 0.3, B120 0.4); no gradient clipping, no EMA, no
# random erasing; seed 0. Not stated, taken from the DeiT defaults: 5 warm-up epochs, label smoothing 0.1.
# Expected: 82.1 top-1 (Tables 5.1, 5.8; 82.4 with BatchNorm: --cfg-options model.backbone.norm=bn).
#   python tools/train.py configs/pretrain/patchconvnet_s60_in1k.py --amp   (torchrun ... --launcher pytorch)
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit.py', '../_base_/imagenet_lamb_400e.py']

model = dict(backbone=dict(type='vitbench.PatchConvNet', arch='patchconvnet_s60', drop_path_rate=0.15),
             data_preprocessor=dict(erase_prob=0.0))
# the DeiT pipeline (datasets/imagenet_deit.py) with RandAugment 7/0.5 instead of 9/0.5
train_pipeline = [
    dict(type='LoadImage'), dict(type='RandomResizedCrop', size=224, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'), dict(type='RandAugment', config_str='rand-m7-mstd0.5-inc1', img_size=224),
    dict(type='PackInputs')]
train_dataloader = dict(batch_size=256, dataset=dict(pipeline=train_pipeline))
# timm's Lamb clips the global gradient norm to 1.0 unless max_grad_norm=None: the thesis clips none
optim_wrapper = dict(optimizer=dict(lr=3e-3, weight_decay=0.01, max_grad_norm=None))
auto_scale_lr = dict(base_batch_size=2048)  # --cfg-options auto_scale_lr.enable=True for other batch sizes

experiment = dict(task='pretrain', dataset='imagenet', backbone='patchconvnet_s60',
                  backbone_overrides=dict(drop_path_rate=0.15),
                  pretrain=dict(recipe='supervised', epochs=400, checkpoint=None))
