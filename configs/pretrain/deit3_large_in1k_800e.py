# DeiT III ViT-L, supervised on ImageNet-1k for 800 epochs at 192 px, as the released deit_3_large_224_1k.pth was
# trained (facebookresearch/deit README_revenge.md, ViT-L ImageNet-1k command): the ViT-B 800-epoch recipe
# (deit3_base_in1k_800e.py: LAMB 3e-3 at batch 2048, weight decay 0.05, 192 px) with drop path 0.45
# (--drop-path 0.45), batch 64 per GPU on 4 nodes x 8 GPUs (--batch 64 --nodes 4).
# Expected at 192: 84.0 top-1 (official log, epoch 800). Then configs/finetune/deit3_large_in1k_ft224.py:
# 84.9 top-1 / ReaL 88.7 / V2 75.1 (thesis Tables 6.7, 6.9).
#   python tools/train.py configs/pretrain/deit3_large_in1k_800e.py --amp
#   (32 GPUs; on 8 GPUs add optim_wrapper.accumulative_counts=4 to keep the batch of 2048)
_base_ = ['./deit3_base_in1k_800e.py']

train_dataloader = dict(batch_size=64)  # per GPU
model = dict(backbone=dict(type='vitbench.VisionTransformer', arch='deit3_large_patch16_224', drop_path_rate=0.45))
experiment = dict(backbone='deit3_large_patch16_224', backbone_overrides=dict(drop_path_rate=0.45))
