# Distilled MAE-Tiny (MAE-lite §6; official mae_lite_distill_exp.py): MAE-Tiny (mae_vit_tiny12h_in1k_400e.py)
# plus alpha=1.0 x MSE between the teacher's and the head-mapped student's last-block attention logits over
# the same visible tokens. Teacher: a frozen MAE-Base encoder (mae_vit_base_in1k_1600e.py's backbone.pth, or
# the official mae_pretrain_vit_base.pth with arch='deit_base_patch16_224').
# Fine-tuned: 78.4 top-1 (+0.4 over MAE-Tiny; large gains on small transfer sets and COCO, MAE-lite Table 5).
_base_ = ['./mae_vit_tiny12h_in1k_400e.py']

model = dict(
    type='DistilledMAE',
    teacher=dict(arch='deit_base_patch16_224', checkpoint='work_dirs/mae_vit_base_in1k_1600e/backbone.pth'),
    distill_layers=[-1],  # the last block of both (MAE-lite: distill_attn_idx=(12,)); pairs: [(s, t), ...]
    alpha=1.0)
experiment = dict(pretrain=dict(recipe='dmae'))
