"""ImageNet-V2 and ImageNet-ReaL: the two test sets DeiT III and the thesis report next to ImageNet val (the
val - V2 gap is DeiT III's overfitting control).

- ImageNet-V2 "matched frequency" (Recht et al., 2019): new images of the 1000 classes, in its release layout,
  one folder per class named by the class *index*. The label is ``int(folder name)``: ImageFolder's sorted
  order would put '10' before '2'.
- ImageNet-ReaL (Beyer et al., 2020): the ILSVRC2012 val images re-labelled with every valid label.
  ``real.json`` lists, for val image ``ILSVRC2012_val_<n>.JPEG``, its valid labels at entry n - 1; images
  with no valid label (an empty list) are left out. A prediction is right when it is one of the labels
  (:class:`pretrain.metrics.ReaLAccuracy`).

Both are test-only (``test_mode``) readers of the ImageNet family, with the same layout errors as ImageNet.
"""
import json
import os
import os.path as osp
import re
from typing import List

import torch

from vitbench.registry import DATASETS

from .data import DatasetLayoutError, ImageNet, image_names

NUM_CLASSES = 1000  # ImageNet-1k: the label space of both sets
V2_FOLDER = 'imagenetv2-matched-frequency-format-val'  # what imagenetv2-matched-frequency.tar.gz unpacks to
V2_LAYOUT = f"""\
<data_root>/                     the unpacked release, e.g. data/{V2_FOLDER}
  <class index>/<image>.jpeg     one folder per ImageNet-1k class, named by its index 0..999 (the label),
                                 e.g. 10/0af3f1b55de68e1a6c3ae2bd9a4e8edb9c1b8e2a.jpeg"""
REAL_FILE = 'real.json'
REAL_LAYOUT = f"""\
<data_root>/
  val/<class>/ILSVRC2012_val_<8 digits>.JPEG   the ImageNet val split (ImageFolder layout, or flat in val/)
  {REAL_FILE}                                    the ReaL labels (google-research/reassessed-imagenet): a JSON
                                               list, one entry per val image in file-number order, each the
                                               list of its valid labels 0..{NUM_CLASSES - 1} ([]: left out)"""
VAL_IMAGE = re.compile(r'ILSVRC2012_val_(\d{8})\.JPEG$', re.IGNORECASE)
REAL_LABELS = 'real_labels'  # the data_samples key of the multi-hot valid labels, read by ReaLAccuracy


def val_image_name(number: int) -> str:
    return f'ILSVRC2012_val_{number:08d}.JPEG'


@DATASETS.register_module()
class ImageNetV2(ImageNet):
    """ImageNet-V2 in its release layout (V2_LAYOUT); ``data_root`` is the folder of the class folders."""

    def __init__(self, data_root: str, pipeline=(), test_mode: bool = True, **kwargs):
        super().__init__(data_root=data_root, split='', pipeline=pipeline, test_mode=test_mode, **kwargs)

    def _layout_error(self, problem: str):
        return DatasetLayoutError(f'ImageNet-V2 at {self.data_root}: {problem}. Expected the release layout:\n'
                                  f'{V2_LAYOUT}')

    def load_data_list(self) -> List[dict]:
        if not osp.isdir(self.split_dir):
            raise self._layout_error('folder not found')
        folders = [e.name for e in os.scandir(self.split_dir) if e.is_dir()]
        not_index = sorted(f for f in folders if not (f.isdigit() and int(f) < NUM_CLASSES))
        if not_index:
            raise self._layout_error(f'folders {not_index[:5]} are not class indices 0..{NUM_CLASSES - 1}')
        data_list = []
        for name in sorted(folders, key=int):
            folder = osp.join(self.split_dir, name)
            data_list += [dict(img_path=osp.join(folder, f), gt_label=int(name)) for f in image_names(folder)]
        if not data_list:
            raise self._layout_error('no images in class folders' if folders else 'no class folders')
        return data_list


@DATASETS.register_module()
class ImageNetReaL(ImageNet):
    """The ImageNet val images of ``data_root/split`` with their ReaL labels from ``data_root/ann_file``
    (REAL_LAYOUT). Each sample carries its valid labels as a multi-hot ``data_samples['real_labels']``
    (fixed size, so batches collate); ``gt_label`` is its first valid label."""

    def __init__(self, data_root: str, split: str = 'val', ann_file: str = REAL_FILE, pipeline=(),
                 test_mode: bool = True, **kwargs):
        super().__init__(data_root=data_root, split=split, ann_file=ann_file, pipeline=pipeline,
                         test_mode=test_mode, **kwargs)

    def _layout_error(self, problem: str):
        return DatasetLayoutError(f'ImageNet-ReaL at {self.data_root}: {problem}. Expected:\n{REAL_LAYOUT}')

    def load_data_list(self) -> List[dict]:
        if not osp.isfile(self.ann_file):
            raise self._layout_error(f'{self.ann_file} not found')
        real = self._read_labels()
        if not osp.isdir(self.split_dir):
            raise self._layout_error(f'{self.split_dir} not found')
        images = {}  # file number -> path; val/ may be flat or in class folders
        for folder, _, names in os.walk(self.split_dir):
            for name in names:
                match = VAL_IMAGE.match(name)
                if match:
                    images[int(match.group(1))] = osp.join(folder, name)
        if len(real) != len(images):
            raise ValueError(f'{self.ann_file} has {len(real)} entries, but {self.split_dir} holds {len(images)} '
                             f'ILSVRC2012 val images: it needs one entry per val image, in file-number order')
        missing = [n for n in range(1, len(real) + 1) if n not in images]
        if missing:
            raise self._layout_error(f'{val_image_name(missing[0])} is missing ({len(missing)} in all), '
                                     f'although {self.ann_file} labels it')
        return [dict(img_path=images[n], gt_label=labels[0], real_labels=labels)
                for n, labels in enumerate(real, 1) if labels]

    def _read_labels(self) -> List[List[int]]:
        with open(self.ann_file) as f:
            try:
                real = json.load(f)
            except ValueError as e:
                raise ValueError(f'{self.ann_file}: not valid JSON ({e})') from e
        ok = isinstance(real, list) and all(
            isinstance(labels, list) and all(isinstance(y, int) and 0 <= y < NUM_CLASSES for y in labels)
            for labels in real)
        if not ok:
            raise ValueError(f'{self.ann_file}: expected a JSON list of label lists (labels 0..{NUM_CLASSES - 1})')
        return real

    def prepare_data(self, idx: int):
        packed = super().prepare_data(idx)
        valid = torch.zeros(NUM_CLASSES, dtype=torch.bool)
        valid[self.get_data_info(idx)[REAL_LABELS]] = True
        packed['data_samples'][REAL_LABELS] = valid
        return packed
