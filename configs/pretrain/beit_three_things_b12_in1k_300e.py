# BEiT masked image modelling (Bao et al., ICLR 2022; microsoft/unilm beit run_beit_pretraining.py and README) of
# the ViT-B12 of "Three things" Table 7 (BeiT+FT column: 300 pre-training epochs, then
# configs/finetune/beit_three_things_b12_ft_100e.py for 100), on ImageNet-1k. The stem is the variant:
# --cfg-options model.backbone.arch=three_things_b12_hmlp_bn experiment.backbone=three_things_b12_hmlp_bn
# (backbones/variants.py three_things_b1*). Masked after the stem ("Three things" §5).
# BEiT's values: 75 of 196 patches masked block-wise (blocks >= 16, aspect 0.3), one RandomResizedCrop resized to
# 224 (bicubic) and to the tokenizer's 112 (Lanczos) after colour jitter 0.4 and a flip, Inception mean / std
# (0.5, 0.5); LayerScale 0.1, one relative position bias shared by the blocks, no absolute position embedding,
# drop path 0.1; AdamW (0.9, 0.999) 1.5e-3 at batch 2048 (16 GPUs x 128), weight decay 0.05, gradient clipping
# 3.0, 10 warm-up epochs from 1e-6, cosine to 1e-5 (BEiT appendix, pre-training hyper-parameters).
# Tokenizer: "Three things" retrains BEiT's dVAE on ImageNet-1k (not released); this config uses the suite's
# k-means tokenizer (pretrain/beit_tokenizer.py), fitted once first:
#   python tools/beit_tokenizer.py configs/pretrain/beit_three_things_b12_in1k_300e.py
#   python tools/train.py configs/pretrain/beit_three_things_b12_in1k_300e.py --amp
# With DALL-E's weights (a state dict, docs/recipes.md): --cfg-options model.tokenizer.type=DALLETokenizer
#   model.tokenizer.checkpoint=PATH experiment.pretrain.tokenizer=dall-e-8192
# Expected after the fine-tune (Table 7, a retrained dVAE): linear stem 83.05, hMLP BN 83.43, hMLP LN 83.24.
_base_ = ['../_base_/imagenet_runtime.py']

data_root = 'data/imagenet'
img_size = 224
max_epochs = 300
warmup_epochs = 10
base_lr = 1.5e-3
vocab_size = 8192
tokenizer_file = f'work_dirs/beit_tokenizer/kmeans_{vocab_size}_in1k.pth'

model = dict(
    type='BEiT',
    backbone=dict(type='vitbench.VisionTransformer', arch='three_things_b12_linear', init_values=0.1,
                  rel_pos_bias=True, drop_path_rate=0.1),
    tokenizer=dict(type='KMeansTokenizer', checkpoint=tokenizer_file, vocab_size=vocab_size, seed=0,
                   max_images=100000),
    shared_rel_pos_bias=True,
    abs_pos_embed=False,
    data_preprocessor=dict(type='ClsDataPreprocessor', mean=(127.5, 127.5, 127.5), std=(127.5, 127.5, 127.5)))

train_pipeline = [
    dict(type='LoadImage'),
    dict(type='ColorJitter', strength=0.4),
    dict(type='RandomHorizontalFlip'),
    dict(type='BEiTMaskedViews', size=img_size, second_size=img_size // 2, patch_size=16, num_masking_patches=75,
         min_num_patches=16),
    dict(type='PackInputs', keys=('beit_mask',)),
]
train_dataloader = dict(
    batch_size=128,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,
    sampler=dict(type='DefaultSampler', shuffle=True),
    collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='train', pipeline=train_pipeline))
# no validation: BEiT is evaluated by fine-tuning backbone.pth
val_dataloader = val_cfg = val_evaluator = None

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=base_lr, betas=(0.9, 0.999), weight_decay=0.05),
    clip_grad=dict(max_norm=3.0),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: no weight decay on norms, biases, tokens
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6 / base_lr, by_epoch=True, begin=0, end=warmup_epochs,
         convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=warmup_epochs, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=2048)
custom_hooks = [dict(type='BackboneExportHook')]

experiment = dict(task='pretrain', dataset='imagenet', backbone='three_things_b12_linear',
                  backbone_overrides=dict(init_values=0.1, rel_pos_bias=True, drop_path_rate=0.1),
                  pretrain=dict(recipe='beit', epochs=max_epochs, checkpoint=None,
                                tokenizer=f'kmeans-{vocab_size}'))
