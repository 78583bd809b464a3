# UperNet + DeiT III ViT-L/16 with ImageNet-21k pre-training on ADE20k: thesis Table 6.12 "ViT-L†" pre-trained at 320
# x 320, 54.6 mIoU single-scale, 55.6 multi-scale; the upernet_xcit160k protocol and 512 crops of
# upernet_deit3_l_in21k.py, from the ImageNet-1k fine-tune at 320
# (configs/finetune/deit3_large_in21k_90e_ft_in1k_320.py; decision there). Its position embeddings are interpolated
# from 20 x 20 to the 32 x 32 of a 512 crop.
#   python tools/train.py configs/pretrain/deit3_large_in21k_90e.py --amp
#   python tools/train.py configs/finetune/deit3_large_in21k_90e_ft_in1k_320.py --amp
#   python tools/train.py configs/upernet_deit3_l_in21k_320.py
_base_ = ['./upernet_deit3_l_in21k.py']

checkpoint = 'work_dirs/deit3_large_in21k_90e_ft_in1k_320/backbone.pth'
model = dict(backbone=dict(init_cfg=dict(checkpoint=checkpoint)))
