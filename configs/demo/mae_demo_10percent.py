# configs/pretrain/mae_vit_tiny12h_in1k10pct_400e.py (MAE-lite Table 3, "10% IN1K") on the demo: mae_demo.py on
# the demo ImageNet's class-balanced 10 % list (subsets/10percent.txt, in SimCLR's format; tools/make_demo_data.py
# writes it with a 1 % one and an ImageNet-LT-format long-tailed one), repeated 10 times an epoch so that the 20
# epochs make as many iterations as on the whole demo ImageNet. Its records and backbone.pth say
# pretrain.data = 'imagenet_10percent', and the leaderboard gives it a row of its own, "mae (imagenet_10percent)".
_base_ = ['./mae_demo.py']

work_dir = 'work_dirs/demo/mae_demo_10percent'
train_dataloader = dict(dataset=dict(
    _delete_=True, type='RepeatDataset', times=10,
    dataset=dict(type='ImageNet', data_root='data/demo/imagenet', split='train',
                 subset='data/demo/imagenet/subsets/10percent.txt', pipeline={{_base_.train_pipeline}})))
experiment = dict(pretrain=dict(data='imagenet_10percent'))
