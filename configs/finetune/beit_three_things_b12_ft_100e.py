# BEiT's ImageNet-1k fine-tuning (microsoft/unilm beit run_class_finetuning.py; get_started_for_image_classification.md,
# BEiT-base from self-supervised weights) as "Three things" Table 7 runs it after 300 BEiT pre-training epochs:
# 100 epochs, AdamW (0.9, 0.999) 4e-3 at batch 1024 (8 GPUs x 128), weight decay 0.05, layer-wise lr decay 0.65,
# 20 warm-up epochs from 1e-6, cosine to 1e-6, drop path 0.1, average pooling + fc_norm, RandAugment m9/0.5,
# Mixup 0.8 / CutMix 1.0, label smoothing 0.1, random erasing 0.25, Inception mean / std, LayerScale and the
# relative position bias of the pre-training (its shared table, copied into every block by the export).
# Not as BEiT: the head starts as the suite's classifier head (BEiT scales it by 0.001), and the absolute
# position table, zero in the pre-training, is trained here (BEiT has none).
# Start from the pre-training's backbone.pth (tools/pipeline.py --table passes it):
#   python tools/train.py configs/finetune/beit_three_things_b12_ft_100e.py --amp \
#       --checkpoint work_dirs/beit_three_things_b12_in1k_300e/backbone.pth
# Expected (Table 7, BeiT+FT): 83.05 (linear stem), 83.43 (hMLP BN); the stem follows the checkpoint's variant:
# --cfg-options model.backbone.arch=VARIANT experiment.backbone=VARIANT.
_base_ = ['../_base_/imagenet_runtime.py', '../_base_/datasets/imagenet_deit.py']

num_classes = 1000
max_epochs = 100
warmup_epochs = 20
base_lr = 4e-3
checkpoint = 'work_dirs/beit_three_things_b12_in1k_300e/backbone.pth'
model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.VisionTransformer', arch='three_things_b12_linear', init_values=0.1,
                  rel_pos_bias=True, global_pool='avg', drop_path_rate=0.1,
                  init_cfg=dict(type='Pretrained', checkpoint=checkpoint)),
    num_classes=num_classes,
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(type='ClsDataPreprocessor', mean=(127.5, 127.5, 127.5), std=(127.5, 127.5, 127.5),
                           num_classes=num_classes, mixup_alpha=0.8, cutmix_alpha=1.0, erase_prob=0.25))
train_dataloader = dict(sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True))

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=base_lr, betas=(0.9, 0.999), weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=0.65))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6 / base_lr, by_epoch=True, begin=0, end=warmup_epochs,
         convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-6, by_epoch=True, begin=warmup_epochs, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
auto_scale_lr = dict(base_batch_size=1024)

# `pretrain` is read from the checkpoint's own metadata (recipe 'beit', its tokenizer, its epochs)
experiment = dict(task='finetune', dataset='imagenet', backbone='three_things_b12_linear',
                  backbone_overrides=dict(init_values=0.1, rel_pos_bias=True, global_pool='avg'))
