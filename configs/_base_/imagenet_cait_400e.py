# The CaiT training recipe (Touvron et al., ICCV 2021, §4.3; thesis §3.7): "identical to DeiT except mentioned
# otherwise" (./imagenet_deit_distilled_300e.py): AdamW lr 1e-3 at batch 1024, cosine, 5 warm-up epochs,
# weight decay 0.05, repeated augmentation, 400 epochs, test crop ratio 1.0 (CaiT §4.3, thesis Table 3.22),
# hard distillation ("Υ") from a RegNetY-16GF without a distillation token (through the class head, 1/2 labels
# + 1/2 teacher argmax). Stochastic depth is uniform over the blocks (backbones/cait.py); its rate d_r and the
# LayerScale init epsilon are the only per-model settings (epsilon: the variant; d_r: each config).
# Without distillation (the paper's "@224" column): --cfg-options model.distillation=None
# experiment.pretrain.recipe=supervised.
_base_ = ['./imagenet_deit_distilled_300e.py']

max_epochs = 400
img_size = 224
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs, val_interval=10)
val_dataloader = dict(dataset=dict(pipeline=[
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]))
test_dataloader = val_dataloader
test_crop_ratio = 1.0  # the evaluation crop (CaiT §4.3), one key: harness/experiment/test_crop.py
experiment = dict(pretrain=dict(epochs=max_epochs))
