# Frozen ResMLP-S12 features on ImageNet-1k: thesis Table 4.2's evaluation of the DINO-pre-trained ResMLPs
# (configs/pretrain/dino_resmlp_12_in1k_300e.py: linear 67.5, k-NN 62.6). DINO's eval_knn.py: the training images
# are the k-NN's neighbours, the val images the queries, both resized to 256 (bicubic) and centre-cropped to 224;
# weighted k-NN with k=20, T=0.07 (frozen_runtime.py). The linear column is the frozen task's probe on these
# features (DINO's eval_linear.py schedule: SGD, lr 0.001 x batch/256, cosine, 100 epochs); DINO's own probe
# also random-resize-crops and flips each epoch, which a probe on features computed once cannot (a known
# difference, docs/recipes.md "DINO").
#   python tools/test.py configs/frozen/imagenet_resmlp_12.py work_dirs/dino_resmlp_12_in1k_300e/backbone.pth
_base_ = ['./frozen_runtime.py']

data_root = 'data/imagenet'
img_size = 224
model = dict(type='FrozenFeatureModel', arch='resmlp_12')
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.875),
    dict(type='PackInputs'),
]
test_dataloader = dict(
    batch_size=256, num_workers=10, persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=False), collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='val', test_mode=True, pipeline=test_pipeline))
test_cfg = dict(type='FrozenFeatureLoop', memory_dataloader=dict(
    batch_size=256, num_workers=10, persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=False), collate_fn=dict(type='default_collate'),
    dataset=dict(type='ImageNet', data_root=data_root, split='train', pipeline=test_pipeline)))

experiment = dict(task='frozen', dataset='imagenet', backbone='resmlp_12')
