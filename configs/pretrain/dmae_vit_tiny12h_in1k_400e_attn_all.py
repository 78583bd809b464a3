# Distilled MAE-Tiny, ablation of MAE-lite §5 / Fig. 7 (Wang et al., ICML 2023): attention distillation on *all*
# blocks (s = t = 0..11; 'all' pairs blocks by relative depth where the depths differ) instead of the last one
# (dmae_vit_tiny12h_in1k_400e.py). Fig. 7 (ImageNet top-1 after a 100-epoch fine-tuning, plotted without numbers):
# the last block alone gains most, all blocks less, and training is slower. A single lower block k:
# --cfg-options "model.distill_layers=[k]". Fine-tune as the figure:
#   tools/train.py configs/finetune/mae_lite_vit_tiny12h_ft_300e.py --checkpoint .../backbone.pth \
#     --cfg-options train_cfg.max_epochs=100 param_scheduler.1.end=100
_base_ = ['./dmae_vit_tiny12h_in1k_400e.py']

model = dict(distill_layers='all')
experiment = dict(pretrain=dict(recipe='dmae_attn_all'))
