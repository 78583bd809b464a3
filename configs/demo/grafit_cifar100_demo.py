# Demo of Grafit (configs/pretrain/grafit_resnet50_cifar100_coarse.py) on the demo CIFAR-100 (`python
# tools/make_demo_data.py --out data/demo --datasets cifar100`): the demo ViT at 32x32 trained on the 20 coarse
# labels only, then evaluated frozen at the 100 fine labels by k-NN and retrieval:
#   python tools/train.py configs/demo/grafit_cifar100_demo.py
#   python tools/test.py configs/demo/frozen_cifar100_demo.py work_dirs/demo/grafit_cifar100_demo/backbone.pth \
#       --work-dir work_dirs/demo/frozen_grafit
# The fine-label baseline beside it (cross-entropy on the 100 fine labels, the same schedule):
#   python tools/train.py configs/demo/grafit_cifar100_demo.py --work-dir work_dirs/demo/baseline_fine_demo \
#       --cfg-options "model.losses=[ce]" train_dataloader.dataset.label_level=fine model.num_classes=100 \
#       experiment.pretrain.recipe=supervised experiment.dataset=cifar100  # its own row, not a seed of Grafit's
# Scaled to the demo: the first 1,000 training images (all 5,000 stay the k-NN's collection), 2 views instead of 8,
# MLPs 512 wide, 3 epochs, batch 128.
_base_ = ['../pretrain/grafit_resnet50_cifar100_coarse.py']

data_root = 'data/demo/cifar100'
max_epochs = 3
batch_size = 128
work_dir = 'work_dirs/demo/grafit_cifar100_demo'
_view = [dict(type='RandomResizedCrop', size=32, scale=(0.5, 1.0)), dict(type='RandomHorizontalFlip')]
train_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='MultiView', views=[_view] * 2),
    dict(type='PackInputs', keys=['sample_idx']),
]
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='vit_demo_patch8_64', img_size=32, global_pool='avg'),
             hidden=512, memory_size=1000)
train_dataloader = dict(batch_size=batch_size, num_workers=1, persistent_workers=False, pin_memory=False,
                        dataset=dict(data_root=data_root, pipeline=train_pipeline, indices=1000))
optim_wrapper = dict(optimizer=dict(lr=0.1 * batch_size / 256))
param_scheduler = [dict(type='CosineAnnealingLR', eta_min=0., by_epoch=True, begin=0, end=max_epochs,
                        convert_to_iter_based=True)]
train_cfg = dict(max_epochs=max_epochs)
auto_scale_lr = dict(base_batch_size=batch_size)
default_hooks = dict(logger=dict(interval=10), checkpoint=dict(interval=max_epochs))
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend='gloo'))
experiment = dict(backbone='vit_demo_patch8_64', backbone_overrides=dict(img_size=32, global_pool='avg'),
                  pretrain=dict(epochs=max_epochs))
