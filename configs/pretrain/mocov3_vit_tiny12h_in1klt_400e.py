# MoCov3-Tiny of mocov3_vit_tiny12h_in1k_400e.py pre-trained on part of ImageNet-1k: MAE-lite Table 3, "IN1K-LT", 73.0
# (-0.7) top-1 after the 300-epoch fine-tune (configs/finetune/mocov3_vit_tiny12h_ft_300e.py). The data: ImageNet-LT's
# training list (Liu et al., CVPR 2019: 115,846 images, 1,280 for the most frequent class and 5 for the rarest;
# ImageNet_LT_train.txt of the OLTR release, e.g. facebookresearch/classifier-balancing data/ImageNet_LT/, put next to
# the ImageNet folders). How long the subsets were pre-trained is not stated; vitbench keeps the full set's iterations
# (a decision, so that only the data differs): the list is repeated 11 times (115,846 x 11 = 1,274,306 images, 0.5 %
# fewer iterations than the full set) per epoch (mmengine's RepeatDataset), and the 400 epochs of
# mocov3_vit_tiny12h_in1k_400e.py stay. Labels are the full set's.
#   python tools/train.py configs/pretrain/mocov3_vit_tiny12h_in1klt_400e.py --amp
_base_ = ['./mocov3_vit_tiny12h_in1k_400e.py']

train_dataloader = dict(dataset=dict(
    _delete_=True, type='RepeatDataset', times=11,
    dataset=dict(type='ImageNet', data_root='data/imagenet', split='train',
                 subset='data/imagenet/ImageNet_LT_train.txt', pipeline={{_base_.train_dataloader.dataset.pipeline}})))
experiment = dict(pretrain=dict(data='imagenet_lt'))
