# Supervised ImageNet-1k training with LAMB for 400 epochs in the DeiT recipe (thesis ch. 3), the base the
# ResMLP (§4.3.1) and PatchConvNet (§5.2.3) recipes share: cross-entropy with label smoothing 0.1, Mixup 0.8,
# CutMix 1.0 (random erasing 0.25 as DeiT; PatchConvNet sets none), cosine to 1e-5 after 5 warm-up epochs,
# no layer decay (layer_decay_rate=1.0 keeps only the rule of no weight decay on 1-D parameters and the class
# token), validation every 10 epochs. Configs set the backbone, LAMB's lr and weight decay, and the batch.
num_classes = 1000
max_epochs = 400
model = dict(
    type='ImageClassifier',
    backbone=dict(arch=None),  # the config's named variant
    num_classes=num_classes,
    loss=dict(kind='ce', label_smoothing=0.1),
    data_preprocessor=dict(type='ClsDataPreprocessor', num_classes=num_classes, mixup_alpha=0.8,
                           cutmix_alpha=1.0, erase_prob=0.25))
optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type='Lamb', lr=5e-3, weight_decay=0.05),
    constructor='LayerDecayOptimWrapperConstructor',
    paramwise_cfg=dict(layer_decay_rate=1.0))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
