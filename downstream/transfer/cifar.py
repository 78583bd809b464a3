"""CIFAR-10 / CIFAR-100 from the pickled batches of the official "python version" tarballs.

Each batch unpickles (``encoding='bytes'``, the files were written by Python 2) to a dict whose ``b'data'``
is a uint8 N x 3072 array: per 32 x 32 image the red, green and blue planes, row-major. The images stay in
memory; :class:`~downstream.transfer.transforms.LoadImageOrArray` hands them to the pipeline as PIL images, and
``img_path`` names the batch and row (``.../test_batch[17]``) so that a bad sample can be found.
"""
import os.path as osp
import pickle
from typing import List, Tuple

import numpy as np

from vitbench.registry import DATASETS

from .base import TransferDataset


@DATASETS.register_module()
class CIFAR10(TransferDataset):
    """CIFAR-10 (50,000 / 10,000 images, 10 classes); ``data_root`` holds the unpacked ``cifar-10-batches-py``."""
    LAYOUT = """\
<data_root>/cifar-10-batches-py/
  data_batch_1 ... data_batch_5   pickled dicts: b'data' uint8 N x 3072 (R, G, B planes of 32x32),
  test_batch                      b'labels' (class ids 0..9), b'filenames', b'batch_label'
  batches.meta                    b'label_names' (10), b'num_cases_per_batch', b'num_vis'"""
    SPLITS = ('train', 'test')
    OFFICIAL = dict(classes=10, train=50000, test=10000)
    FOLDER = 'cifar-10-batches-py'
    FILES = dict(train=[f'data_batch_{i}' for i in range(1, 6)], test=['test_batch'])
    META, NAMES_KEY, LABELS_KEY = 'batches.meta', b'label_names', b'labels'

    def load_split(self) -> Tuple[List[str], List[dict]]:
        classes = [n.decode() for n in self._unpickle(self.META, self.NAMES_KEY)[self.NAMES_KEY]]
        images, data_list = [], []
        for name in self.FILES[self.split]:
            batch = self._unpickle(name, b'data', self.LABELS_KEY)
            data, labels = batch[b'data'], batch[self.LABELS_KEY]
            if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2
                    and data.shape[1] == 3072 and len(labels) == len(data)):
                raise self.format_error(f'{self.FOLDER}/{name}', f"b'data' should be a uint8 N x 3072 array with "
                                        f'N labels, got {getattr(data, "dtype", type(data))} '
                                        f'{getattr(data, "shape", "")} and {len(labels)} labels')
            if not all(0 <= int(y) < len(classes) for y in labels):
                raise self.format_error(f'{self.FOLDER}/{name}', f'labels outside [0, {len(classes)})')
            path = osp.join(self.data_root, self.FOLDER, name)
            data_list += [dict(img_path=f'{path}[{i}]', gt_label=int(y), img_index=len(data_list) + i)
                          for i, y in enumerate(labels)]
            images.append(data.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1))  # N x H x W x RGB
        self.images = np.ascontiguousarray(np.concatenate(images))
        return classes, data_list

    def _unpickle(self, name: str, *keys: bytes) -> dict:
        rel = f'{self.FOLDER}/{name}'
        with open(self.need_file(rel), 'rb') as f:
            try:
                batch = pickle.load(f, encoding='bytes')
            except Exception as e:  # any unpickling failure means the same: not a CIFAR batch
                raise self.format_error(rel, f'cannot be unpickled ({type(e).__name__}: {e})') from e
        missing = [k for k in keys if not isinstance(batch, dict) or k not in batch]
        if missing:
            raise self.format_error(rel, f'expected a pickled dict with the keys {list(keys)}, missing {missing}')
        return batch

    def get_data_info(self, idx: int) -> dict:
        info = super().get_data_info(idx)
        info['img'] = self.images[info['img_index']]
        return info


@DATASETS.register_module()
class CIFAR100(CIFAR10):
    """CIFAR-100 (50,000 / 10,000 images, 100 fine classes); ``data_root`` holds ``cifar-100-python``."""
    LAYOUT = """\
<data_root>/cifar-100-python/
  train, test   pickled dicts: b'data' uint8 N x 3072 (R, G, B planes of 32x32), b'fine_labels' (class ids
                0..99), b'coarse_labels' (superclass ids 0..19), b'filenames', b'batch_label'
  meta          b'fine_label_names' (100), b'coarse_label_names' (20)"""
    OFFICIAL = dict(classes=100, train=50000, test=10000)
    FOLDER = 'cifar-100-python'
    FILES = dict(train=['train'], test=['test'])
    META, NAMES_KEY, LABELS_KEY = 'meta', b'fine_label_names', b'fine_labels'
    # the label levels of the official pickles: the 100 fine classes and the 20 superclasses of the CIFAR page's
    # table (each superclass holds five fine classes), which the files carry as b'coarse_labels'
    LEVELS = {'fine': (b'fine_label_names', b'fine_labels'), 'coarse': (b'coarse_label_names', b'coarse_labels')}

    def __init__(self, data_root: str, split: str, label_level: str = 'fine', **kwargs):
        """``label_level``: 'fine' (100 classes) or 'coarse' (the 20 superclasses) as ``gt_label``; every sample
        also carries both as ``fine_label`` and ``coarse_label``."""
        if label_level not in self.LEVELS:
            raise ValueError(f"CIFAR100: label_level must be one of {sorted(self.LEVELS)}, got {label_level!r}")
        self.label_level = label_level
        self.NAMES_KEY, self.LABELS_KEY = self.LEVELS[label_level]
        super().__init__(data_root=data_root, split=split, **kwargs)

    def load_split(self) -> Tuple[List[str], List[dict]]:
        classes, data_list = super().load_split()
        levels = {}
        for name in self.FILES[self.split]:
            batch = self._unpickle(name, b'fine_labels', b'coarse_labels')
            for level, (_, key) in self.LEVELS.items():
                levels.setdefault(level, []).extend(int(y) for y in batch[key])
        for info, fine, coarse in zip(data_list, levels['fine'], levels['coarse']):
            info.update(fine_label=fine, coarse_label=coarse)
        return classes, data_list
