# Frozen ResNet-50 (timm's) features on CIFAR-100 at its 32x32, fine labels: the evaluation of Grafit's coarse-to-fine
# rows (thesis Tables 2.4, 2.7, 2.8, 2.11: on-the-fly k-NN top-1 and category-level retrieval mAP, each test image
# against the training set). The thesis scores g = P(f(x)), the projector kept (§2.3.1); this config scores the
# exported trunk f (backbone.pth), as every backbone of the board is scored; set model.projector to score P too.
#   python tools/train.py configs/pretrain/grafit_resnet50_cifar100_coarse.py --work-dir work_dirs/grafit_r50_c100
#   python tools/test.py configs/frozen/cifar100_resnet50.py work_dirs/grafit_r50_c100/backbone.pth
# The thesis' k-NN: k from {10, 15, 20, 25, 30} cross-validated, σ = 0.05 (Eq. 2.6): test_evaluator.k / .temperature.
_base_ = ['./cifar100_deit3_s.py']

img_size = 32
model = dict(arch='timm:resnet50')
test_pipeline = [
    dict(type='LoadImageOrArray'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
test_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_cfg = dict(memory_dataloader=dict(dataset=dict(pipeline=test_pipeline)))
test_evaluator = dict(temperature=0.05)
experiment = dict(backbone='timm:resnet50', backbone_overrides=dict())
