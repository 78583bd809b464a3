# Grafit (Touvron thesis ch. 2; ICCV 2021) with ResNet-50 (timm's) on CIFAR-100's 20 coarse labels, evaluated at the
# 100 fine labels by k-NN and category-level retrieval (configs/frozen/, Table 2.4: Grafit 77.7 kNN / 55.7 mAP with
# coarse conditioning, 52.9 without; Table 2.7). Recipe (thesis §2.4.3): SGD with Nesterov momentum, lr 0.1 x
# batch / 256, cosine; batch 1024, 600 epochs; CIFAR at its 32x32; RandomResizedCrop + RandAugment (+ random erasing:
# not here, the suite applies it to single-view batches only, ClsDataPreprocessor); σ = 0.05; T = 8 augmentations
# on CIFAR (4 on ImageNet); projector MLP 2048 -> 4096 -> 256 (32.9M parameters with the trunk, Table 2.7).
# The chapter's other rows are switches of this config (run them with --cfg-options):
#   Grafit FC (Table 2.4, 2.7):   model.projector=fc
#   SNCA+ (Table 2.4, 2.7):       "model.losses=[knn]"
#   Baseline (Table 2.4, 2.7):    "model.losses=[ce]"
#   L_CE + L_inst (Table 2.7):    "model.losses=[ce,inst]"      L_inst alone: "model.losses=[inst]"
#   L_CE + L_Triplet (Tab. 2.1):  "model.losses=[ce,triplet]"   (ResNet-18 there: model.backbone.arch=timm:resnet18)
#   fine labels (Table 2.8, 2.13): train_dataloader.dataset.label_level=fine model.num_classes=100
#                                 experiment.dataset=cifar100 (and experiment.pretrain.recipe=supervised for CE)
#   loss weights (Table 2.11):    model.weights.inst=0.5 ...
# ViTs of the suite: model.backbone.type=vitbench.VisionTransformer model.backbone.arch=deit3_small_patch16_224
#   model.backbone.img_size=32 (or 224 with resizing).
_base_ = ['../_base_/imagenet_runtime.py']

data_root = 'data/cifar100'
img_size = 32
max_epochs = 600
batch_size = 1024
views = 8
label_level = 'coarse'
_view = [
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='RandAugment', config_str='rand-m9-mstd0.5-inc1', img_size=img_size),
]
train_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='MultiView', views=[_view] * views),
    dict(type='PackInputs', keys=['sample_idx']),
]
model = dict(
    type='Grafit',
    backbone=dict(type='vitbench.TimmBackbone', arch='timm:resnet50'),
    num_classes=20,  # CIFAR-100's superclasses
    memory_size=50000,
    losses=['knn', 'inst'],
    projector='mlp', hidden=4096, dim=256,
    sigma=0.05,
    target_decay=0.99,  # τ: BYOL's base value; the chapter does not state it
    data_preprocessor=dict(type='ClsDataPreprocessor'))
train_dataloader = dict(
    batch_size=batch_size // 8, num_workers=10, persistent_workers=True, pin_memory=True, drop_last=True,
    sampler=dict(type='DefaultSampler', shuffle=True), collate_fn=dict(type='default_collate'),
    dataset=dict(type='CIFAR100', data_root=data_root, split='train', label_level=label_level,
                 pipeline=train_pipeline))
val_dataloader = val_cfg = val_evaluator = None  # evaluated frozen at the fine level: configs/frozen/
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.1 * batch_size / 256, momentum=0.9,
                                                          nesterov=True, weight_decay=1e-4))
param_scheduler = [dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=0, end=max_epochs,
                        convert_to_iter_based=True)]
train_cfg = dict(by_epoch=True, max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=batch_size)
custom_hooks = [dict(type='BackboneExportHook')]

experiment = dict(task='pretrain', dataset='cifar100-coarse', backbone='timm:resnet50',
                  pretrain=dict(recipe='grafit', epochs=max_epochs, checkpoint=None))
