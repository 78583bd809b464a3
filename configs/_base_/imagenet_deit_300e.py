# The DeiT training recipe (Touvron et al., ICML 2021; thesis Table 3.9 "DeiT-B" column, §3.4; the official
# main.py defaults and README_deit.md commands), shared by configs/pretrain/deit_*: 300 epochs, AdamW with lr
# 5e-4 x batch / 512 = 1e-3 at batch 1024 (README_deit.md: 4 GPUs x 256 for Ti/S, 16 x 64 for B), weight decay
# 0.05, cosine to 1e-5 after 5 linear warm-up epochs from 1e-6, cross-entropy with label smoothing 0.1,
# RandAugment 9/0.5 (no colour jitter: timm drops it when RandAugment is on), Mixup 0.8 / CutMix 1.0 (switch
# probability 0.5), random erasing 0.25, repeated augmentation x3, stochastic depth 0.1 (linearly increasing
# over the blocks, timm's DeiT), no gradient clipping, no EMA, test crop ratio 0.875
# (configs/_base_/datasets/imagenet_deit.py). Configs set the backbone (model.backbone.arch and
# experiment.backbone) and, for distillation, model.distillation.
#
# Every ingredient is switched by a key (thesis Table 3.8, the ablation of the training methods; docs/recipes.md
# "DeiT ablation switches"), e.g. --cfg-options model.data_preprocessor.mixup_alpha=0.0:
#   RandAugment        train_dataloader.dataset.pipeline.3.config_str=rand-n0-m9-mstd0.5-inc1 (timm's n: operations
#                      per image; 0 applies none), AutoAugment in its place: pipeline.3.type=AutoAugment
#                      pipeline.3.config_str=original
#   Mixup / CutMix     model.data_preprocessor.mixup_alpha=0.0 / cutmix_alpha=0.0
#   random erasing     model.data_preprocessor.erase_prob=0.0
#   stochastic depth   model.backbone.drop_path_rate=0.0 (and experiment.backbone_overrides.drop_path_rate=0.0)
#   repeated aug.      train_dataloader.sampler.num_repeats=1
#   dropout            model.backbone.proj_drop_rate=0.1 (after the attention projection and the MLP layers)
#   EMA                ema.enabled=True (decay 0.99996, official --model-ema-decay)
#   optimizer          optim_wrapper.optimizer.type=SGD optim_wrapper.optimizer.momentum=0.9
_base_ = ['./imagenet_runtime.py', './datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 300
model = dict(
    type='ImageClassifier',
    backbone=dict(arch=None, drop_path_rate=0.1),  # the config's named variant
    num_classes=num_classes,
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.8,
                           cutmix_alpha=1.0, erase_prob=0.25))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: timm's no-weight-decay rule only
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=1024)  # --cfg-options auto_scale_lr.enable=True for other batch sizes
# the moving average of the weights, off (Table 3.9 has none; Table 3.8 "+ EMA": ema.enabled=True): mmengine's
# EMAHook with the official decay 0.99996 per iteration (timm ModelEma: momentum 1 - decay), buffers averaged too
ema = dict(enabled=False, momentum=4e-5, update_buffers=True)

experiment = dict(task='pretrain', dataset='imagenet', backbone=None,
                  backbone_overrides=dict(drop_path_rate=0.1),
                  pretrain=dict(recipe='supervised', epochs=max_epochs, checkpoint=None))
