# PatchConvNet-S60, supervised on ImageNet-21k (winter 2021, 10,450 classes: pretrain/imagenet21k.py) for 90 epochs
# at 224, the pre-training of thesis Table 5.2 and of Table 5.3's † rows (§5.2.3 "Training on ImageNet21k": "90
# epochs as in prior works", batch 2048, lr 3e-3, weight decay 0.01; or batch 4096 with lr 4e-3). Everything else is
# the ImageNet-1k recipe (patchconvnet_s60_in1k.py: LAMB, half-cosine, label smoothing, RandAugment 7/0.5, Mixup 0.8,
# CutMix 1.0, LayerScale, no gradient clipping, no EMA, no random erasing) without repeated augmentation ("only on
# ImageNet-1k"). Drop path: Table 5.8's value for the model (S60 0.15), which the ImageNet-1k fine-tune lowers by 0.1
# (§5.3.4). Decision: L60 / L120 are not in Table 5.8; the map runs them with B60's 0.3 / B120's 0.4.
# Then the 100-epoch ImageNet-1k fine-tune, configs/finetune/patchconvnet_s60_in21k_ft_in1k.py (at 288 / 384 / 512:
# ..._ft_in1k_{288,384,512}.py), and UperNet, configs/upernet_patchconvnet_s60_in21k.py.
#   python tools/train.py configs/pretrain/patchconvnet_s60_in21k_90e.py --amp   (data: pretrain/imagenet21k.py)
# Other sizes (thesis Table 5.2): --cfg-options model.backbone.arch=patchconvnet_b60 experiment.backbone=patchconvnet_b60
# model.backbone.drop_path_rate=0.3 experiment.backbone_overrides.drop_path_rate=0.3 (the map's needs give each).
_base_ = ['./patchconvnet_s60_in1k.py']

num_classes = 10450
max_epochs = 90
data_root = 'data/imagenet21k'
model = dict(num_classes=num_classes, data_preprocessor=dict(num_classes=num_classes))
# the ImageNet-1k recipe's augmentation (RandomResizedCrop, flip, RandAugment 7/0.5: the base's train pipeline) on
# ImageNet-21k; 256 per GPU x 8 GPUs = 2048, without repeated augmentation
train_dataloader = dict(
    sampler=dict(type='DefaultSampler', shuffle=True, _delete_=True),
    dataset=dict(type='ImageNet21k', data_root=data_root, split='imagenet21k_train', num_classes=num_classes))
val_dataloader = dict(
    dataset=dict(type='ImageNet21k', data_root=data_root, split='imagenet21k_val', num_classes=num_classes))
test_dataloader = val_dataloader
val_evaluator = dict(type='Accuracy', topk=(1, 5), _delete_=True)
test_evaluator = val_evaluator
val_cfg = dict(_delete_=True)  # no ImageNet-V2 / ReaL: they score the 1000 ImageNet-1k classes
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0, end=5, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=5, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs)

experiment = dict(dataset='imagenet21k', pretrain=dict(epochs=max_epochs))
