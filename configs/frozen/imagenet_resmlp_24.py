# Frozen ResMLP-S24 features on ImageNet-1k (thesis Table 4.2: linear 72.8, k-NN 69.4 after
# configs/pretrain/dino_resmlp_24_in1k_300e.py); the evaluation of imagenet_resmlp_12.py.
#   python tools/test.py configs/frozen/imagenet_resmlp_24.py work_dirs/dino_resmlp_24_in1k_300e/backbone.pth
_base_ = ['./imagenet_resmlp_12.py']

model = dict(arch='resmlp_24')
experiment = dict(backbone='resmlp_24')
