"""What every transfer dataset shares: a split of a dataset read in its native on-disk layout, and errors that
name the missing or malformed file and show the expected tree.

A subclass sets ``LAYOUT`` (the tree under ``data_root``), ``SPLITS`` and ``OFFICIAL`` (the real dataset's
sizes, logged next to what was found) and implements :meth:`load_split`, returning the class names and a
list of ``dict(img_path=..., gt_label=...)``. Labels are 0-based in the order of the class names.
"""
import os
import os.path as osp
from typing import Dict, Iterable, List, Sequence, Tuple

import scipy.io
from mmengine.dataset import BaseDataset
from mmengine.logging import print_log

from pretrain.data import DatasetLayoutError
from vitbench.compat.mmengine import set_dataset_classes
from vitbench.sample_error import prepare_named


class TransferDataset(BaseDataset):
    """Args:
        data_root: the dataset's folder (the one ``LAYOUT`` describes).
        split: one of ``SPLITS``.
        pipeline, test_mode, indices, ...: as mmengine's ``BaseDataset``.
    """
    LAYOUT = ''
    SPLITS: Tuple[str, ...] = ()
    OFFICIAL: Dict[str, int] = {}  # e.g. dict(classes=102, trainval=2040, test=6149)

    def __init__(self, data_root: str, split: str, pipeline: Sequence = (), test_mode: bool = False, **kwargs):
        if split not in self.SPLITS:
            raise ValueError(f'{type(self).__name__}: split must be one of {self.SPLITS}, got {split!r}')
        self.split = split
        super().__init__(data_root=data_root, pipeline=list(pipeline), test_mode=test_mode, **kwargs)

    def load_split(self) -> Tuple[Sequence[str], List[dict]]:
        raise NotImplementedError

    def prepare_data(self, idx):
        return prepare_named(self, idx, super().prepare_data)  # an unreadable sample is named, in one line

    def load_data_list(self) -> List[dict]:
        if not osp.isdir(self.data_root):
            raise self.layout_error('', 'folder not found')
        classes, data_list = self.load_split()
        if not data_list:
            raise self.layout_error('', f"the '{self.split}' split lists no images")
        set_dataset_classes(self, tuple(classes))
        official = ', '.join(f'{k} {v}' for k, v in self.OFFICIAL.items())
        print_log(f"{type(self).__name__} '{self.split}' at {self.data_root}: {len(data_list)} images, "
                  f'{len(classes)} classes (the real dataset: {official})', logger='current')
        return data_list

    # ------------------------------------------------------------------ helpers for load_split
    def path(self, rel: str) -> str:
        return osp.join(self.data_root, rel)

    def layout_error(self, rel: str, problem: str) -> DatasetLayoutError:
        where = osp.join(self.data_root, rel) if rel else self.data_root
        return DatasetLayoutError(f'{type(self).__name__}: {where}: {problem}. Expected the layout:\n{self.LAYOUT}')

    def format_error(self, rel: str, problem: str) -> ValueError:
        return ValueError(f'{type(self).__name__}: {self.path(rel)}: {problem}. Expected the layout:\n{self.LAYOUT}')

    def need_file(self, *candidates: str) -> str:
        """The path of the first of ``candidates`` (relative to data_root) that exists."""
        for rel in candidates:
            if osp.isfile(self.path(rel)):
                return self.path(rel)
        raise self.layout_error(candidates[0], 'file not found' + (
            f' (nor {", ".join(candidates[1:])})' if len(candidates) > 1 else ''))

    def need_dir(self, rel: str) -> str:
        if not osp.isdir(self.path(rel)):
            raise self.layout_error(rel + '/', 'folder not found')
        return self.path(rel)

    def check_images(self, folder: str, names: Iterable[str], listed_in: str) -> None:
        """Every image listed in ``listed_in`` is in ``folder`` (one directory listing, not a stat per file)."""
        present = set(os.listdir(self.need_dir(folder)))
        missing = [n for n in names if n not in present]
        if missing:
            more = f' and {len(missing) - 5} more' if len(missing) > 5 else ''
            raise self.layout_error(f'{folder}/{missing[0]}', f'image not found ({len(missing)} of the images listed '
                                    f'in {listed_in} are missing: {", ".join(missing[:5])}{more})')

    def read_lines(self, rel: str) -> List[Tuple[int, str]]:
        """(line number, stripped text) of the non-empty lines of a text annotation file."""
        with open(self.need_file(rel)) as f:
            return [(n, line.strip()) for n, line in enumerate(f, 1) if line.strip()]

    def load_mat(self, rel: str, keys: Sequence[str], *alternatives: str) -> dict:
        """A MATLAB file's variables (scipy.io.loadmat), checking that ``keys`` are there."""
        path = self.need_file(rel, *alternatives)
        try:
            mat = scipy.io.loadmat(path)
        except Exception as e:  # scipy raises several types for a damaged file
            raise self.format_error(osp.relpath(path, self.data_root),
                                    f'cannot be read by scipy.io.loadmat ({type(e).__name__}: {e})') from e
        missing = [k for k in keys if k not in mat]
        if missing:
            raise self.format_error(osp.relpath(path, self.data_root), f'has no variable(s) {missing} '
                                    f'(found {sorted(k for k in mat if not k.startswith("__"))})')
        return mat
