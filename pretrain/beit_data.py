"""BEiT pre-training's data step (microsoft/unilm beit ``datasets.py``, ``DataAugmentationForBEiT``): after the
colour jitter and flip (the config's steps before it), one RandomResizedCrop box is cut from the image and resized
twice, to the ViT's input (224, bicubic) and to the tokenizer's view (112, Lanczos; BEiT's
``RandomResizedCropAndInterpolationWithTwoPic``), and a block-wise mask of the patch grid is drawn
(:class:`pretrain.block_masking.BlockMasking`).

``results['img']`` becomes [patch view, tokenizer view] (PackInputs packs views of two sizes as a list of two
tensors), and ``results['beit_mask']`` the (H/p, W/p) mask, 1 = masked (``PackInputs(keys=('beit_mask',))``
carries it into the data samples).
"""
from typing import Optional, Sequence

from timm.data.transforms import RandomResizedCropAndInterpolation, str_to_pil_interp
from torchvision.transforms import functional as TF

from vitbench.registry import TRANSFORMS

from .block_masking import BlockMasking


@TRANSFORMS.register_module()
class BEiTMaskedViews:
    """Args:
        size, second_size: the patch view's and the tokenizer view's sides (224, 112).
        patch_size: the ViT's patch side (16): the mask is (size / patch_size)^2.
        num_masking_patches, min_num_patches, max_num_patches, min_aspect: :class:`BlockMasking`'s (BEiT: 75 of
            196, i.e. 40 %, blocks of at least 16 patches, aspect 0.3).
        scale, ratio: the crop's area and aspect ranges (BEiT: timm's defaults, (0.08, 1), (3/4, 4/3)).
        interpolation, second_interpolation: 'bicubic', 'lanczos'.
        seed: the mask generator's seed (None: from the process' entropy, as BEiT's ``random``).
    """

    def __init__(self, size: int = 224, second_size: int = 112, patch_size: int = 16, num_masking_patches: int = 75,
                 min_num_patches: int = 16, max_num_patches: Optional[int] = None, min_aspect: float = 0.3,
                 scale: Sequence[float] = (0.08, 1.0), ratio: Sequence[float] = (3 / 4, 4 / 3),
                 interpolation: str = 'bicubic', second_interpolation: str = 'lanczos', seed: Optional[int] = None):
        if size % patch_size:
            raise ValueError(f'BEiTMaskedViews: size {size} is not a multiple of patch_size {patch_size}')
        self.size, self.second_size = size, second_size
        self.scale, self.ratio = tuple(scale), tuple(ratio)
        self.interpolation = str_to_pil_interp(interpolation)
        self.second_interpolation = str_to_pil_interp(second_interpolation)
        self.masking = BlockMasking(size // patch_size, num_masking_patches, min_num_patches=min_num_patches,
                                    max_num_patches=max_num_patches, min_aspect=min_aspect, seed=seed)

    def __call__(self, results: dict) -> dict:
        img = results['img']
        top, left, height, width = RandomResizedCropAndInterpolation.get_params(img, self.scale, self.ratio)
        results['img'] = [
            TF.resized_crop(img, top, left, height, width, [self.size, self.size], self.interpolation),
            TF.resized_crop(img, top, left, height, width, [self.second_size, self.second_size],
                            self.second_interpolation)]
        results['beit_mask'] = self.masking()
        return results

    def __repr__(self):
        return (f'BEiTMaskedViews(size={self.size}, second_size={self.second_size}, '
                f'masked={self.masking.num_masking_patches})')
