# DeiT III ViT-B, supervised on ImageNet-1k for 400 epochs at 224: the thesis default recipe (Touvron, PhD thesis
# 2022, Table 6.1 "Ours IN-1k"; DeiT III, ECCV 2022, Table 1). LAMB 3e-3 at batch 2048 (8 GPUs x 256, lr not
# rescaled: official --unscale-lr), weight decay 0.02, cosine to 1e-5 after 5 warm-up epochs, BCE loss without
# label smoothing, Mixup 0.8 / CutMix 1.0, RandomResizedCrop + flip + 3-Augment + colour jitter 0.3, repeated
# augmentation x3, gradient clipping 1.0 (inside LAMB), no random erasing, test crop ratio 1.0, LayerScale 1e-4
# (the variant), uniform drop path 0.1 (Table 6.14).
# Expected: 83.1 top-1 / ReaL 87.7 / V2 72.6 (thesis Tables 6.4, 6.15).
#   python tools/train.py configs/pretrain/deit3_base_in1k_400e.py --amp
#   (8 GPUs: torchrun --nproc_per_node 8 tools/train.py ... --launcher pytorch)
# deit3_{tiny,small,medium,large,huge}_in1k_400e.py and the 800-epoch recipes derive from this file; they set
# every value that depends on a changed one (mmengine evaluates the variables of a base file once).
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit3.py']

num_classes = 1000
max_epochs = 400
model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_base_patch16_224', drop_path_rate=0.1),
    num_classes=num_classes,
    loss=dict(kind='bce'),  # multi-hot targets after Mixup/CutMix, as the official --bce-loss; --smoothing 0.0
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.8,
                           cutmix_alpha=1.0))

# timm's Lamb clips the global gradient norm to 1.0 itself (like Apex's FusedLAMB of the official runs).
# layer_decay_rate=1.0: no layer decay, only timm's rule of no weight decay on norms, biases, LayerScale,
# position embedding and class token.
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='Lamb', lr=3e-3, weight_decay=0.02),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=1.0))
# linear warm-up from lr/1000 (official: from 1e-6), then cosine to the official --min-lr 1e-5
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=2048)  # --cfg-options auto_scale_lr.enable=True for other batch sizes

experiment = dict(task='pretrain', dataset='imagenet', backbone='deit3_base_patch16_224',
                  backbone_overrides=dict(drop_path_rate=0.1),
                  pretrain=dict(recipe='supervised', epochs=max_epochs, checkpoint=None))
