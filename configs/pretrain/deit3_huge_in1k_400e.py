# DeiT III ViT-H/14, supervised on ImageNet-1k for 400 epochs at 224: the ViT-B recipe (deit3_base_in1k_400e.py,
# thesis Table 6.1 "Ours IN-1k", LAMB 3e-3 at batch 2048) with drop path 0.5 (thesis Table 6.14).
# Expected: 84.8 top-1 / ReaL 89.1 / V2 75.3 (thesis Tables 6.6, 6.15).
#   python tools/train.py configs/pretrain/deit3_huge_in1k_400e.py --amp
#   (4 nodes x 8 GPUs x 64 = 2048, as the official runs; on 8 GPUs add optim_wrapper.accumulative_counts=4)
_base_ = ['./deit3_base_in1k_400e.py']

train_dataloader = dict(batch_size=64)  # per GPU

model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_huge_patch14_224', drop_path_rate=0.5))
experiment = dict(backbone='deit3_huge_patch14_224', backbone_overrides=dict(drop_path_rate=0.5))
