"""Repeated augmentation (Hoffer et al.; DeiT): each sampled image appears ``num_repeats`` times, each copy on
another process with its own augmentation. An epoch keeps the length of one pass over the dataset, so it
covers 1/num_repeats of the images (DeiT's "300 epochs" are 100 passes x 3).

timm's ``RepeatAugSampler`` (from the official DeiT code) does the work; this registers it for mmengine's
Runner: world size and rank come from mmengine (so it also runs without torch.distributed), and the shuffle
depends on the config's seed as well as the epoch.
"""
from mmengine.dist import get_dist_info
from timm.data.distributed_sampler import RepeatAugSampler as _TimmRepeatAugSampler

from vitbench.registry import DATA_SAMPLERS


@DATA_SAMPLERS.register_module()
class RepeatAugSampler(_TimmRepeatAugSampler):
    """``dict(type='RepeatAugSampler', num_repeats=3)``; mmengine calls ``set_epoch`` every epoch."""

    def __init__(self, dataset, shuffle: bool = True, num_repeats: int = 3, selected_round: int = 256,
                 seed=None):
        rank, world_size = get_dist_info()
        super().__init__(dataset, num_replicas=world_size, rank=rank, shuffle=shuffle, num_repeats=num_repeats,
                         selected_round=selected_round)
        self.seed = 0 if seed is None else int(seed)
        self.set_epoch(0)

    def set_epoch(self, epoch: int) -> None:
        # timm seeds the shuffle with the epoch alone; offsetting by the seed keeps it reproducible per seed
        self.epoch = self.seed + epoch
