# MAE-Tiny of mae_vit_tiny12h_in1k_400e.py pre-trained on part of ImageNet-1k: MAE-lite Table 3, "1% IN1K", 77.9
# (-0.1) top-1 after the 300-epoch fine-tune (configs/finetune/mae_lite_vit_tiny12h_ft_300e.py). The data: SimCLR's
# class-balanced 1 % list (12,811 images, 12-13 per class; pretrain/subsets/, the list PAWS, Assran et al., the
# paper's citation, uses). How long the subsets were pre-trained is not stated; vitbench keeps the full set's
# iterations (a decision, so that only the data differs): the list is repeated 100 times (12,811 x 100 = 1,281,100
# images) per epoch (mmengine's RepeatDataset), and the 400 epochs of mae_vit_tiny12h_in1k_400e.py stay. Labels are
# the full set's.
#   python tools/train.py configs/pretrain/mae_vit_tiny12h_in1k1pct_400e.py --amp
_base_ = ['./mae_vit_tiny12h_in1k_400e.py']

train_dataloader = dict(dataset=dict(
    _delete_=True, type='RepeatDataset', times=100,
    dataset=dict(type='ImageNet', data_root='data/imagenet', split='train', subset='imagenet_1percent',
                 pipeline={{_base_.train_dataloader.dataset.pipeline}})))
experiment = dict(pretrain=dict(data='imagenet_1percent'))
