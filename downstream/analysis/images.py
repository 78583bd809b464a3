"""The images an analysis feeds every model: a fixed, class-balanced subset of an ImageFolder split, resized and
centre-cropped as at evaluation and normalised with the ImageNet statistics the recipes train with."""
import os
import os.path as osp
from typing import List, Tuple

import numpy as np
import torch

from pretrain.data import ImageNet
from pretrain.preprocessor import IMAGENET_MEAN, IMAGENET_STD
from pretrain.transforms import LoadImage, PackInputs, ResizeCenterCrop


def _split_dataset(folder: str) -> ImageNet:
    folder = osp.normpath(folder)
    if not osp.isdir(folder):
        raise FileNotFoundError(f'--images {folder!r}: folder not found (expected an ImageFolder split, '
                                'e.g. data/demo/imagenet/val)')
    subs = sorted(e.name for e in os.scandir(folder) if e.is_dir())
    if subs and set(subs) <= {'train', 'val'}:
        raise ValueError(f"--images {folder!r} holds the splits {subs}: give one of them, e.g. {folder}/val")
    return ImageNet(data_root=osp.dirname(folder) or '.', split=osp.basename(folder), lazy_init=False)


def load_images(folder: str, num: int, size: int, crop_pct: float = 0.875) -> Tuple[torch.Tensor, List[str]]:
    """``num`` images spread evenly over the sorted (class by class) list of ``folder``'s images →
    (num, 3, size, size) normalised floats and their paths. All of them when the folder holds fewer."""
    dataset = _split_dataset(folder)
    total = len(dataset)
    picks = np.unique(np.linspace(0, total - 1, num=min(num, total)).round().astype(int))
    load, crop, pack = LoadImage(), ResizeCenterCrop(size, crop_pct=crop_pct), PackInputs()
    mean = torch.tensor(IMAGENET_MEAN).view(3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(3, 1, 1)
    images, paths = [], []
    for i in picks:
        info = dataset.get_data_info(int(i))
        packed = pack(crop(load(dict(img_path=info['img_path'], gt_label=info['gt_label']))))
        images.append((packed['inputs'].float() - mean) / std)
        paths.append(info['img_path'])
    return torch.stack(images), paths
