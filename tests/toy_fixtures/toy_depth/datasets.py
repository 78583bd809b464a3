"""ToyRoom: random images, each of its own brightness, whose depth is 1 + 4 x their mean brightness (1 to 3 metres),
made in memory from a seed."""
import torch
from torch.utils.data import Dataset

from vitbench.registry import DATASETS


@DATASETS.register_module()
class ToyRoomDataset(Dataset):
    def __init__(self, size=16, img_size=32, seed=0):
        generator = torch.Generator().manual_seed(seed)
        brightness = torch.rand(size, 1, 1, 1, generator=generator)
        self.images = brightness * torch.rand(size, 3, img_size, img_size, generator=generator)
        self.depths = 1.0 + 4.0 * self.images.mean(dim=(1, 2, 3))

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return dict(inputs=self.images[index], depth=self.depths[index])
