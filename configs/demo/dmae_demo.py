# Demo of distilled MAE (configs/pretrain/dmae_vit_tiny12h_in1k_400e.py): mae_demo.py plus last-block attention
# distillation (alpha 1.0, learnable head mapping M). The teacher is the encoder that mae_demo.py exports, so
# run that first:
#   python tools/train.py configs/demo/mae_demo.py && python tools/train.py configs/demo/dmae_demo.py
# (In the paper the teacher is the larger MAE-Base; any ViT with 8x8 patches works here, e.g. a wider demo
# encoder: `--cfg-options model.teacher.checkpoint=PATH`.)
_base_ = ['./mae_demo.py']

work_dir = 'work_dirs/demo/dmae_demo'
model = dict(
    type='DistilledMAE',
    teacher=dict(checkpoint='work_dirs/demo/mae_demo/backbone.pth'),
    distill_layers=[-1],
    alpha=1.0)
experiment = dict(pretrain=dict(recipe='dmae'))
