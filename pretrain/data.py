"""ImageNet in ImageFolder layout (``<data_root>/<split>/<class folder>/<image>``) as an mmengine dataset.

Classes are the sorted sub-folder names of the split, as torchvision's ``ImageFolder`` numbers them, so the
labels agree with every public ImageNet checkpoint. A split that is not laid out this way raises an error
showing the expected tree. ``ann_file`` lists ``<relative path> <label>`` lines instead (e.g. a flat
validation folder with a label file).
"""
import os
import os.path as osp
from typing import List, Optional

from mmengine.dataset import BaseDataset

from vitbench.compat.mmengine import set_dataset_classes
from vitbench.registry import DATASETS
from vitbench.sample_error import prepare_named

from .imagenet_subsets import read_subset
from .transforms import STAND_IN_IF_UNREADABLE

IMG_EXTENSIONS = ('.jpg', '.jpeg', '.png', '.ppm', '.bmp', '.pgm', '.tif', '.tiff', '.webp')
SPLITS = ('train', 'val')  # the split folders of LAYOUT; ``split`` may name any other sub-folder too
LAYOUT = """\
<data_root>/
  train/<class>/<image>.JPEG     one folder per class, e.g. train/n01440764/n01440764_10026.JPEG
  val/<class>/<image>.JPEG       the same class folders as train/,
                                 e.g. val/n01440764/ILSVRC2012_val_00000293.JPEG"""


class DatasetLayoutError(FileNotFoundError):
    """A dataset folder that is not in the expected layout; the message shows the expected tree."""


def image_names(folder: str) -> List[str]:
    """The sorted names of the images (IMG_EXTENSIONS) directly in ``folder``."""
    return sorted(e.name for e in os.scandir(folder) if e.is_file() and e.name.lower().endswith(IMG_EXTENSIONS))


@DATASETS.register_module()
class ImageNet(BaseDataset):
    """ImageFolder ImageNet (or any dataset in that layout).

    Args:
        data_root: folder holding the splits (e.g. ``data/demo/imagenet``).
        split: sub-folder to read (``train`` / ``val``).
        ann_file: optional ``<path relative to data_root/split> <label>`` list; without it, the folder is
            scanned.
        classes: class folder names, in label order; default: the sorted sub-folders of ``split``.
        subset: keep only the images of this list: a shipped subset's name ('imagenet_1percent',
            'imagenet_10percent') or the path of a list such as ImageNet-LT's (:mod:`pretrain.imagenet_subsets`);
            labels stay those of the full split.
        pipeline, test_mode, ...: as mmengine's ``BaseDataset``.
    """

    def __init__(self, data_root: str, split: str = 'train', ann_file: str = '',
                 classes: Optional[List[str]] = None, subset: str = '', pipeline=(), test_mode: bool = False,
                 **kwargs):
        self.split, self.subset = split, subset
        self._classes = list(classes) if classes is not None else None
        super().__init__(ann_file=ann_file, data_root=data_root, data_prefix=dict(img_path=split),
                         pipeline=list(pipeline), test_mode=test_mode, **kwargs)

    @property
    def split_dir(self) -> str:
        return self.data_prefix['img_path']

    def _layout_error(self, problem: str) -> DatasetLayoutError:
        return DatasetLayoutError(f"ImageNet split '{self.split}' at {self.split_dir}: {problem}. "
                                  f'Expected the ImageFolder layout:\n{LAYOUT}')

    def _class_folders(self) -> List[str]:
        if not osp.isdir(self.split_dir):
            raise self._layout_error('folder not found')
        folders = sorted(e.name for e in os.scandir(self.split_dir) if e.is_dir())
        if not folders:
            raise self._layout_error('no class sub-folders')
        return folders

    def prepare_data(self, idx: int):
        return prepare_named(self, idx, self._prepare)  # an unreadable sample is named, in one line

    def _prepare(self, idx: int):
        info = self.get_data_info(idx)
        if self.test_mode:  # an unreadable image under LoadImage(skip_corrupt=True) gets a stand-in, not None
            info[STAND_IN_IF_UNREADABLE] = True
        return self.pipeline(info)

    def load_data_list(self) -> List[dict]:
        if self.ann_file:
            return self._load_ann_file()
        classes = self._classes or self._class_folders()
        if self.subset:
            set_dataset_classes(self, tuple(classes))
            return read_subset(self.subset, self.split_dir, classes)
        data_list = []
        for label, name in enumerate(classes):
            folder = osp.join(self.split_dir, name)
            if not osp.isdir(folder):
                raise self._layout_error(f"class folder '{name}' is missing")
            data_list += [dict(img_path=osp.join(folder, f), gt_label=label) for f in image_names(folder)]
        if not data_list:
            raise self._layout_error(f'no images (expected files ending in {IMG_EXTENSIONS})')
        set_dataset_classes(self, tuple(classes))
        return data_list

    def _load_ann_file(self) -> List[dict]:
        data_list = []
        with open(self.ann_file) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rsplit(maxsplit=1)
                if len(parts) != 2 or not parts[1].lstrip('-').isdigit():
                    raise ValueError(f"{self.ann_file}:{n}: expected '<relative image path> <integer label>', "
                                     f'got {line.strip()!r}')
                data_list.append(dict(img_path=osp.join(self.split_dir, parts[0]), gt_label=int(parts[1])))
        if self._classes is not None:
            set_dataset_classes(self, tuple(self._classes))
        return data_list
