# DeiT III ViT-H/14, supervised on ImageNet-1k for 800 epochs at low resolution, as the released
# deit_3_huge_224_1k.pth was trained (facebookresearch/deit README_revenge.md, ViT-H ImageNet-1k command): the
# ViT-B 800-epoch recipe (deit3_base_in1k_800e.py: LAMB 3e-3 at batch 2048, weight decay 0.05) with drop path 0.6
# (--drop-path 0.6), batch 64 per GPU on 4 nodes x 8 GPUs, at 154 px. The command says --input-size 160, which
# the 14-pixel patch stem floors to 11 x 11 patches, i.e. the 154 px of thesis Table 6.6 (vitbench's stem refuses
# sizes that are not a multiple of the patch). Decision, 154 rather than 160: the same 11 x 11 tokens and FLOPs,
# and the resolution the thesis names (Table 6.6); the official run resizes its crops to 160 and its stem never
# reads the last 6 pixel rows and columns, this one resizes them to 154 (objects 4 % smaller).
# Expected at the training resolution: 83.5 top-1 (official log at 160, epoch 800). Then
# configs/finetune/deit3_huge_in1k_ft224.py: 85.2 top-1 / ReaL 89.2 / V2 75.9 (thesis Tables 6.6, 6.7).
#   python tools/train.py configs/pretrain/deit3_huge_in1k_800e.py --amp
#   (32 GPUs; on 8 GPUs add optim_wrapper.accumulative_counts=4 to keep the batch of 2048)
_base_ = ['./deit3_base_in1k_800e.py']

img_size = 154
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_huge_patch14_224', img_size=img_size,
                           drop_path_rate=0.6))

train_pipeline = [
    dict(type='LoadImage'),
    dict(type='RandomResizedCrop', size=img_size, scale=(0.08, 1.0)),
    dict(type='RandomHorizontalFlip'),
    dict(type='ThreeAugment'),
    dict(type='ColorJitter', strength=0.3),
    dict(type='PackInputs'),
]
test_pipeline = [
    dict(type='LoadImage'),
    dict(type='ResizeCenterCrop', size=img_size, crop_pct=1.0),
    dict(type='PackInputs'),
]
train_dataloader = dict(batch_size=64, dataset=dict(pipeline=train_pipeline))  # 64 per GPU
val_dataloader = dict(dataset=dict(pipeline=test_pipeline))
test_dataloader = val_dataloader

experiment = dict(backbone='deit3_huge_patch14_224',
                  backbone_overrides=dict(img_size=img_size, drop_path_rate=0.6))
