# The DeiT / CaiT / DeiT III transfer recipe: fine-tune the whole classifier at 224 with the DeiT ImageNet
# training recipe, the learning rate divided by 10 (Flowers, Cars, iNat) or 100 (CIFAR) (thesis §3.7.1.3,
# "same hyperparameters as training"): AdamW, weight decay 0.05, batch 1024 (8 GPUs x 128), 5 warm-up epochs
# then cosine, RandomResizedCrop + flip + RandAugment m9/0.5, Mixup 0.8 / CutMix 1.0, random erasing 0.25,
# label smoothing 0.1, repeated augmentation x3, drop path 0.1; 1000 epochs on CIFAR, Flowers and Cars,
# 360 on iNaturalist. Test: resize + centre crop with crop ratio 1.0 (DeiT III: 1.0 on every dataset, thesis
# Fig. 6.6). The head is re-initialised at the dataset's classes.
# A config adds the dataset (configs/_base_/datasets/transfer_*.py), num_classes, the lr and the epochs.
# Audited value by value from the built optimiser, model and pipelines: tests/protocol_audit/transfer.yaml.
# Deliberate difference: the whole learning-rate curve is divided, so the warm-up starts at lr x 1e-3 and the
# cosine ends at lr x 1e-2, the fractions main.py's --warmup-lr 1e-6 and --min-lr 1e-5 are of the ImageNet rate
# 1e-3 (taken as absolute values, the 1e-5 floor would leave CIFAR's lr 1e-5 no decay at all); and the
# schedule steps every iteration where main.py steps timm's scheduler once per epoch (as the ImageNet recipe).
# Deliberate difference (precision): the protocol builds float32; mixed precision is the run's `--amp` (fp16 or bf16
# as the device allows, vitbench/engine/amp.py; result.json cost.precision), where DeiT's main.py trains under
# autocast with a loss scaler. No model EMA: main.py keeps one by default (--model-ema, decay 0.99996) but evaluates
# and reports the model itself.
_base_ = ['./transfer_runtime.py']

img_size = 224
train_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(
    batch_size=128,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    drop_last=True,  # Mixup/CutMix pair the images of a batch: it must be even
    sampler=dict(type='RepeatAugSampler', num_repeats=3),
    collate_fn=dict(type='default_collate'),
    dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=256,
    num_workers=10,
    persistent_workers=True,
    pin_memory=True,
    sampler=dict(type='DefaultSampler', shuffle=False),
    collate_fn=dict(type='default_collate'),
    dataset=dict(pipeline=test_pipeline, test_mode=True))
test_dataloader = val_dataloader

model = dict(
    type='ImageClassifier',
    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.1),
    trainable='all',  # 'attention' / 'ffn': "Three things" §4 (Table 6); 'linear': a linear probe
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(type='ClsDataPreprocessor', mixup_alpha=0.8, cutmix_alpha=1.0, erase_prob=0.25))
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='AdamW', lr=1e-4, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',  # rate 1.0: only timm's no-weight-decay rule
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    # `end` left out: the Runner sets it to train_cfg.max_epochs
    dict(type='CosineAnnealingLR', eta_min_ratio=0.01, by_epoch=True, begin=5, convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=1000, val_interval=50)
auto_scale_lr = dict(base_batch_size=1024)

# Protocol transfer_deit: this file (harness/experiment/protocol.py), its settings as a config derived from it
# resolves them (the rate and epochs per dataset are part of it).
experiment = dict(task='transfer', protocol=dict(name='transfer_deit', settings=[
    'optim_wrapper', 'param_scheduler', 'train_cfg.max_epochs', 'train_dataloader.batch_size', 'train_pipeline',
    'test_pipeline']))
