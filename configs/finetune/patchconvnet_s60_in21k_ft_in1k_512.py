# PatchConvNet-S60 at 512 px, thesis Table 5.2's "S60 ... 512" row. §5.3.2: the models of Table 5.2 are pre-trained
# 90 epochs on ImageNet-21k at 224, fine-tuned on ImageNet-1k at 384 (patchconvnet_s60_in21k_ft_in1k_384.py), "and
# then fine-tuned at bigger resolution": §5.2.3's "Fine-tuning at higher resolutions" (batch 1024, lr fixed at
# 1e-5, weight decay 0.01, 10 epochs for all models), patchconvnet_s60_ft320.py's recipe at 512 from the ↑384 model.
# Drop path 0.05, the ↑384 fine-tune's (Table 5.8's 0.15 lowered by 0.1 once: the thesis does not lower it again;
# decision). No position embedding to resize: the trunk's convolutions take any grid.
#   python tools/train.py configs/finetune/patchconvnet_s60_in21k_ft_in1k_512.py --amp [--checkpoint PATH]
_base_ = ['./patchconvnet_s60_ft320.py']

img_size = 512
checkpoint = 'work_dirs/patchconvnet_s60_in21k_ft_in1k_384/backbone.pth'
model = dict(backbone=dict(img_size=img_size, init_cfg=dict(type='Pretrained', checkpoint=checkpoint)))
train_pipeline = [
    dict(type='LoadImage'), dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'), dict(type='RandAugment', config_str='rand-m7-mstd0.5-inc1', img_size=img_size),
    dict(type='PackInputs')]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=0.875),
    dict(type='PackInputs'),
]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader
experiment = dict(backbone_overrides=dict(img_size=img_size))
