"""mmseg's ADE20KDataset, failing with the expected folder layout when ``data_root`` is wrong.

Without this check mmseg stops on a bare ``FileNotFoundError`` from ``os.scandir`` (missing folder), or
builds an empty dataset that only fails later in the sampler (empty folder).
"""
import os.path as osp

from mmseg.datasets import ADE20KDataset as _MMSegADE20KDataset

from vitbench.registry import DATASETS

NUM_CLASSES = len(_MMSegADE20KDataset.METAINFO['classes'])  # 150; label map value k is class k - 1, 0 is ignored
# The split folders under images/ and annotations/ (the configs' data_prefix), and the word their file names
# carry: images/training/ADE_train_00000001.jpg.
SPLITS = dict(training='train', validation='val')
LAYOUT = f"""\
  <data_root>/                     the SceneParsing release, e.g. data/ade/ADEChallengeData2016
    images/training/ADE_train_00000001.jpg ...         RGB JPEG
    images/validation/ADE_val_00000001.jpg ...
    annotations/training/ADE_train_00000001.png ...    8-bit greyscale label maps, same name and size as
    annotations/validation/ADE_val_00000001.png ...    the image: 0 = other (ignored), 1..{NUM_CLASSES} = the
                                                       ADE20k classes"""


@DATASETS.register_module(name='ADE20KDataset')
class ADE20KDataset(_MMSegADE20KDataset):
    """``type='vitbench.ADE20KDataset'``: same arguments and behaviour as mmseg's ``ADE20KDataset``."""

    def load_data_list(self):
        folders = [self.data_prefix.get(k) for k in ('img_path', 'seg_map_path')]
        missing = [f for f in folders if f and not osp.isdir(f)]
        if missing:
            self._layout_error(f'there is no folder {missing[0]}')
        data_list = super().load_data_list()
        if not data_list:
            self._layout_error(f'no {self.img_suffix} images in {folders[0]}')
        return data_list

    def _layout_error(self, problem: str):
        raise FileNotFoundError(
            f"ADE20k not found under data_root='{self.data_root}': {problem}.\nExpected layout:\n{LAYOUT}\n"
            f"Put (or symlink) the dataset at data/ade/ADEChallengeData2016, or set data_root in the config "
            f"(configs/_base_/datasets/ade20k.py for every ADE20k config). A small demo copy: "
            f"python tools/make_demo_data.py --out data/demo --scale small")
