# UperNet + DeiT III ViT-B/16 with ImageNet-21k pre-training on ADE20k: thesis Table 6.12 "ViT-B†" pre-trained at 384
# x 384, 53.4 mIoU single-scale, 54.1 multi-scale; the upernet_xcit160k protocol and 512 crops of
# upernet_deit3_b_in21k.py, from the ImageNet-1k fine-tune at 384
# (configs/finetune/deit3_base_in21k_90e_ft_in1k_384.py; decision there). Its position embeddings are interpolated
# from 24 x 24 to the 32 x 32 of a 512 crop.
#   python tools/train.py configs/pretrain/deit3_base_in21k_90e.py --amp
#   python tools/train.py configs/finetune/deit3_base_in21k_90e_ft_in1k_384.py --amp
#   python tools/train.py configs/upernet_deit3_b_in21k_384.py
_base_ = ['./upernet_deit3_b_in21k.py']

checkpoint = 'work_dirs/deit3_base_in21k_90e_ft_in1k_384/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
