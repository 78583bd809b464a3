# Demo of frozen-feature evaluation (configs/frozen/cifar100_deit3_s.py) on the demo CIFAR-100 (100 fine classes
# in 20 superclasses, 5,000 / 1,000 images in the real pickle format: `python tools/make_demo_data.py --out
# data/demo --datasets cifar100`) with the demo backbone at CIFAR's 32x32. The probe's learning rate is raised to
# the demo's size (5,000 images: 5 steps an epoch at batch 1024, where DINO's ImageNet probe takes 1,250).
#   python tools/test.py configs/demo/frozen_cifar100_demo.py work_dirs/demo/sup_demo/backbone.pth
_base_ = ['../frozen/cifar100_deit3_s.py']

data_root = 'data/demo/cifar100'
img_size = 32
work_dir = 'work_dirs/demo/frozen_cifar100_demo'
model = dict(arch='vit_demo_patch8_64', overrides=dict(img_size=img_size, global_pool='avg'))
test_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
test_dataloader = dict(batch_size=250, num_workers=0,
                       dataset=dict(data_root=data_root, pipeline=test_pipeline))
test_cfg = dict(memory_dataloader=dict(batch_size=250, num_workers=0,
                                       dataset=dict(data_root=data_root, pipeline=test_pipeline)))
test_evaluator = dict(linear_probe=dict(epochs=30, batch_size=256, base_lr=0.5))
env_cfg = dict(dist_cfg=dict(backend='gloo'))
experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(img_size=img_size, global_pool='avg'))
