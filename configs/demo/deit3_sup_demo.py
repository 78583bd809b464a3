# Demo of the DeiT III supervised recipe (configs/pretrain/deit3_small_in1k_800e.py) on the embedded demo
# ImageNet (25 object kinds, 2600 training images; `python tools/make_demo_data.py --out data/demo`) with the demo
# backbone vit_demo_patch8_64 (8x8 patches, 6 blocks): same augmentation (RandomResizedCrop, 3-Augment,
# colour jitter, Mixup/CutMix, repeated augmentation), BCE loss, LAMB, cosine with warmup. Trained at 48 px,
# below the variant's 64 (DeiT III's low-resolution training: 36 instead of 64 tokens); finetune_attn_demo.py
# fine-tunes its backbone.pth at 64. A few minutes on 2 CPU cores.
_base_ = ['../pretrain/deit3_small_in1k_800e.py']

data_root = 'data/demo/imagenet'
img_size = 48
num_classes = 25
max_epochs = 6
work_dir = 'work_dirs/demo/deit3_sup_demo'

model = dict(
    backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=img_size, drop_path_rate=0.0),
    num_classes=num_classes,
    data_preprocessor=dict(num_classes=num_classes))
# the positions of configs/_base_/datasets/imagenet_deit3.py, so that the ablation switches apply here as there
# (docs/recipes.md: e.g. train_dataloader.dataset.pipeline.3.type=AutoAugment)
train_pipeline = [
    dict(type='LoadImage'),
    dict(type='TrainCrop', size=img_size, kind='rrc', scale=(0.25, 1.0)),
    dict(type='RandomHorizontalFlip', prob=0.5),
    dict(type='ThreeAugment'),
    dict(type='ColorJitter', strength=0.3),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, num_workers=2, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline))
val_dataloader = dict(batch_size=100, num_workers=1, pin_memory=False,
                      dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_dataloader = val_dataloader
# after the last validation, the demo copies of the extra test sets (configs/_base_/datasets/imagenet_extra_sets.py):
# ImageNet-V2 and ReaL (top1_v2, top1_real in result.json), and the robustness sets: A and R (top1_a, top1_r: the
# argmax over the demo classes in their 200), Sketch (top1_sketch) and C (eight of the 15 corruptions at five
# severities: mCE_partial); ImageNet val's own evaluator adds the calibration error (ece)
_demo = 'data/demo/'
val_cfg = dict(extra_sets=[
    dict(dataset=dict(type='ImageNetV2', data_root=_demo + 'imagenet_v2/imagenetv2-matched-frequency-format-val'),
         evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_v2')),
    dict(dataset=dict(type='ImageNetReaL', data_root=_demo + 'imagenet_real', ann_file='real.json'),
         evaluator=dict(type='ReaLAccuracy')),
    dict(dataset=dict(type='ImageNetA', data_root=_demo + 'imagenet_a/imagenet-a'),
         evaluator=dict(type='ClassSubsetAccuracy', classes='imagenet_a')),
    dict(dataset=dict(type='ImageNetR', data_root=_demo + 'imagenet_r/imagenet-r'),
         evaluator=dict(type='ClassSubsetAccuracy', classes='imagenet_r')),
    dict(dataset=dict(type='ImageNetSketch', data_root=_demo + 'imagenet_sketch/sketch'),
         evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_sketch')),
    dict(dataset=dict(type='ImageNetC', data_root=_demo + 'imagenet_c'), evaluator=dict(type='CorruptionError')),
])

optim_wrapper = dict(optimizer=dict(lr=4e-3))
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-2, by_epoch=True, begin=0, end=1, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True, begin=1, end=max_epochs,
         convert_to_iter_based=True),
]
train_cfg = dict(max_epochs=max_epochs, val_interval=max_epochs // 2)
auto_scale_lr = dict(base_batch_size=64)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))

experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(img_size=img_size, _delete_=True),
                  pretrain=dict(recipe='supervised', epochs=max_epochs))
