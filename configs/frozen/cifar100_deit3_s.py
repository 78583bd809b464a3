# Frozen DeiT III ViT-S features on CIFAR-100 (fine labels): the training images are the k-NN's neighbours and
# retrieval's collection, the test images the queries. Images at 224, as the backbone was trained.
#   python tools/test.py configs/frozen/cifar100_deit3_s.py work_dirs/deit3_small_in1k_400e/backbone.pth
# Coarse level (the 20 superclasses): --cfg-options test_dataloader.dataset.label_level=coarse
#   test_cfg.memory_dataloader.dataset.label_level=coarse experiment.dataset=cifar100-coarse
_base_ = ['./frozen_runtime.py']

data_root = 'data/cifar100'
img_size = 224
label_level = 'fine'
model = dict(type='FrozenFeatureModel', arch='deit3_small_patch16_224')
test_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
test_dataloader = dict(
    batch_size=256, num_workers=4, persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=False), collate_fn=dict(type='default_collate'),
    dataset=dict(type='CIFAR100', data_root=data_root, split='test', label_level=label_level,
                 pipeline=test_pipeline))
test_cfg = dict(type='FrozenFeatureLoop', memory_dataloader=dict(
    batch_size=256, num_workers=4, persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=False), collate_fn=dict(type='default_collate'),
    dataset=dict(type='CIFAR100', data_root=data_root, split='train', label_level=label_level,
                 pipeline=test_pipeline)))

experiment = dict(task='frozen', dataset='cifar100', backbone='deit3_small_patch16_224')
