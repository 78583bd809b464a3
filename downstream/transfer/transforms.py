"""``LoadImageOrArray``: the first step of every transfer pipeline, for datasets on disk and in memory alike.

The recipes' pipelines are shared by all transfer datasets, but CIFAR's images live in its pickles, not in
files. This is pretrain's :class:`~pretrain.transforms.LoadImage` that first looks for an image the dataset
already put in ``results['img']`` (an H x W x 3 uint8 array or a PIL image) and reads ``img_path`` otherwise.
"""
import numpy as np
from PIL import Image

from pretrain.transforms import LoadImage
from vitbench.registry import TRANSFORMS


@TRANSFORMS.register_module()
class LoadImageOrArray(LoadImage):

    def __call__(self, results: dict):
        img = results.get('img')
        if img is None:
            return super().__call__(results)
        if isinstance(img, np.ndarray):
            img = Image.fromarray(img)
        results['img'] = img.convert('RGB')
        return results
