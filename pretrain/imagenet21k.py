"""ImageNet-21k, winter 2021 release, in the folder layout of its processed version (ImageNet-21K-P, Ridnik et al.,
2021): ``<split>/<wnid>/*.JPEG``, 10,450 classes, the data of DeiT III's IN-21k pre-training (thesis §6.3.3).

The labels come from a class list file, one WordNet id per line: the class of folder ``<wnid>`` is the number of
its line (0-based), not its rank among the sorted folders, so labels stay those of the list (and of every model
trained with it) whatever folders a split holds. A split folder that the list does not name, or a class of the
list without a folder, is an error: a 19,167-class full winter-21 folder or a truncated copy would otherwise train
silently on other classes.
"""
import os
import os.path as osp
import re
from typing import List, Optional

from vitbench.compat.mmengine import set_dataset_classes
from vitbench.registry import DATASETS

from .data import DatasetLayoutError, ImageNet, image_names

NUM_CLASSES = 10450  # ImageNet-21K-P winter 2021
CLASS_LIST = 'imagenet21k_miil_w21_synsets.txt'  # the name timm ships the winter-21 list under (timm/data/_info/)
SPLITS = ('imagenet21k_train', 'imagenet21k_val')
WNID = re.compile(r'n\d{8}')
LAYOUT = f"""\
<data_root>/                            e.g. data/imagenet21k
  {SPLITS[0]}/<wnid>/<image>.JPEG  one folder per class, e.g. {SPLITS[0]}/n00005787/n00005787_10.JPEG
  {SPLITS[1]}/<wnid>/<image>.JPEG    the same classes
  {CLASS_LIST}      the class list: one WordNet id per line, line k (0-based) = label k;
                                        winter 2021: {NUM_CLASSES:,} lines (timm/data/_info/{CLASS_LIST})"""


@DATASETS.register_module()
class ImageNet21k(ImageNet):
    """ImageNet-21k in LAYOUT, labelled by the class list.

    Args:
        data_root: folder holding the splits and the class list (e.g. ``data/imagenet21k``).
        split: sub-folder to read (``imagenet21k_train`` / ``imagenet21k_val``).
        class_list: the class list file, relative to ``data_root`` (or absolute).
        num_classes: when given, the number of classes the list must have (the model's head): a list of
            another release (fall 2011: 11,221) fails here instead of indexing past the head.
        pipeline, test_mode, ...: as mmengine's ``BaseDataset``.
    """

    def __init__(self, data_root: str, split: str = SPLITS[0], class_list: str = CLASS_LIST,
                 num_classes: Optional[int] = None, pipeline=(), test_mode: bool = False, **kwargs):
        self.class_list, self.num_classes = class_list, num_classes
        super().__init__(data_root=data_root, split=split, pipeline=pipeline, test_mode=test_mode, **kwargs)

    @property
    def class_list_path(self) -> str:
        return osp.join(self.data_root, self.class_list)

    def _layout_error(self, problem: str) -> DatasetLayoutError:
        return DatasetLayoutError(f"ImageNet-21k split '{self.split}' at {self.split_dir}: {problem}. "
                                  f'Expected:\n{LAYOUT}')

    def read_class_list(self) -> List[str]:
        """The WordNet ids of the class list, in label order."""
        path = self.class_list_path
        if not osp.isfile(path):
            raise DatasetLayoutError(
                f'ImageNet-21k class list {path} not found: expected one WordNet id per line in label order '
                f'(winter 2021: timm/data/_info/{CLASS_LIST}, {NUM_CLASSES:,} lines); set class_list= to its path')
        with open(path) as f:
            wnids = [line.strip() for line in f]
        while wnids and not wnids[-1]:
            wnids.pop()
        for n, wnid in enumerate(wnids, 1):
            if not WNID.fullmatch(wnid):
                raise ValueError(f"{path}:{n}: {wnid!r} is not a WordNet id (expected 'n' and 8 digits, one per line)")
        if len(set(wnids)) != len(wnids):
            seen = set()
            twice = next(w for w in wnids if w in seen or seen.add(w))
            raise ValueError(f'{path}: {twice} is listed twice (each class once, line = label)')
        if self.num_classes is not None and len(wnids) != self.num_classes:
            raise ValueError(f'{path}: {len(wnids)} classes, but num_classes is {self.num_classes} (the model '
                             f'head); winter 2021 has {NUM_CLASSES}')
        return wnids

    def load_data_list(self) -> List[dict]:
        wnids = self.read_class_list()
        if not osp.isdir(self.split_dir):
            raise self._layout_error('folder not found')
        label = {wnid: k for k, wnid in enumerate(wnids)}
        folders = sorted(e.name for e in os.scandir(self.split_dir) if e.is_dir())
        unknown = [f for f in folders if f not in label]
        if unknown:
            raise DatasetLayoutError(f"ImageNet-21k {self.split_dir}: folder '{unknown[0]}' is not in the class list "
                                     f'{self.class_list_path} ({len(unknown)} such folders; expected only its '
                                     f'{len(wnids)} WordNet ids)')
        present = set(folders)
        missing = [w for w in wnids if w not in present]
        if missing:
            raise DatasetLayoutError(f"ImageNet-21k {self.split_dir}: no folder for class '{missing[0]}' of "
                                     f'{self.class_list_path} ({len(missing)} of its {len(wnids)} classes missing)')
        data_list = []
        for wnid in folders:
            folder = osp.join(self.split_dir, wnid)
            data_list += [dict(img_path=osp.join(folder, f), gt_label=label[wnid]) for f in image_names(folder)]
        if not data_list:
            raise self._layout_error('no images (expected .JPEG files in the class folders)')
        set_dataset_classes(self, tuple(wnids))
        return data_list
