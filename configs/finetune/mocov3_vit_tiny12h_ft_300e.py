# MAE-lite's ImageNet fine-tuning of MoCov3-Tiny (Wang et al., ICML 2023, Tables 1 and 3; official MOCOV3.md):
# the "impr." recipe of mae_lite_vit_tiny12h_ft_300e.py (300 epochs) with layer-wise lr decay 0.75 instead of
# 0.85 and class-token pooling, as MoCo-v3 is pre-trained. From mocov3_vit_tiny12h_in1k_400e.py: 73.7 top-1
# (Table 1); from the subsets' pre-trainings (mocov3_vit_tiny12h_in1k{1pct,10pct,lt}_400e.py) Table 3's rows.
#   python tools/train.py configs/finetune/mocov3_vit_tiny12h_ft_300e.py --checkpoint OTHER/backbone.pth
_base_ = ['./mae_lite_vit_tiny12h_ft_300e.py']

checkpoint = 'work_dirs/mocov3_vit_tiny12h_in1k_400e/backbone.pth'
model = dict(backbone=dict(global_pool='token', init_cfg=dict(checkpoint=checkpoint)))
optim_wrapper = dict(paramwise_cfg=dict(layer_decay_rate=0.75))
experiment = dict(backbone_overrides=dict(global_pool='token'))
