# ResMLP-S24 pre-trained with DINO (configs/pretrain/dino_resmlp_24_in1k_300e.py), fine-tuned with the labels as
# resmlp_12_dino_ft_in1k.py says: thesis Table 4.3, 79.9 top-1 / 85.9 ReaL / 68.6 V2 (+0.5 over the supervised
# S24 alone, §4.3.3).
#   python tools/train.py configs/finetune/resmlp_24_dino_ft_in1k.py --amp
_base_ = ['../pretrain/resmlp_24_in1k.py']

checkpoint = 'work_dirs/dino_resmlp_24_in1k_300e/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
experiment = dict(task='finetune', pretrain=None)
