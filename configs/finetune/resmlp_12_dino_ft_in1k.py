# ResMLP-S12 pre-trained with DINO (configs/pretrain/dino_resmlp_12_in1k_300e.py, the teacher's backbone.pth), then
# fine-tuned with the labels: thesis Table 4.3, "pre-trained SSL (DINO)", 76.5 top-1 / 83.6 ReaL / 64.5 V2 (S24:
# 79.9, resmlp_24_dino_ft_in1k.py). The thesis states no fine-tuning recipe ("we also fine-tune a model pre-trained
# with self-supervision on ImageNet using the ground-truth labels", §4.3.3) and compares it with the supervised
# run: the decision here is that run's recipe (resmlp_12_in1k.py: LAMB 5e-3, weight decay 0.2, 400 epochs, the DeiT
# augmentations) started from the DINO weights instead of a random initialisation; its records carry the
# checkpoint's label (dino, 300 epochs).
#   python tools/train.py configs/finetune/resmlp_12_dino_ft_in1k.py --amp   (--checkpoint OTHER/backbone.pth)
_base_ = ['../pretrain/resmlp_12_in1k.py']

checkpoint = 'work_dirs/dino_resmlp_12_in1k_300e/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(task='finetune', pretrain=None)
