"""mmseg's ADE20KDataset, failing with the expected folder layout when ``data_root`` is wrong.

Without this check mmseg stops on a bare ``FileNotFoundError`` from ``os.scandir`` (missing folder), or
builds an empty dataset that only fails later in the sampler (empty folder). A label map whose size differs from
its image would be trained on silently (image and label resized from different sizes, then cropped alike): every
pair's sizes are compared when the dataset is built, from the file headers (seconds for all of ADE20k).
"""
import os.path as osp

from PIL import Image
from mmseg.datasets import ADE20KDataset as _MMSegADE20KDataset

from vitbench.registry import DATASETS
from vitbench.sample_error import prepare_named

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

    def prepare_data(self, idx):
        return prepare_named(self, idx, super().prepare_data)  # an unreadable sample is named, in one line

    def load_data_list(self):
        folders = [self.data_prefix.get(k) for k in ('img_path', 'seg_map_path')]
        missing = [f for f in folders if f and not osp.isdir(f)]
        if missing:
            self._layout_error(f'there is no folder {missing[0]}')
        data_list = super().load_data_list()
        if not data_list:
            self._layout_error(f'no {self.img_suffix} images in {folders[0]}')
        self._check_label_sizes(data_list)
        return data_list

    def _check_label_sizes(self, data_list):
        """Every label map exists and has its image's size."""
        wrong = []
        for info in data_list:
            image, label = info['img_path'], info.get('seg_map_path')
            if not label:
                continue
            try:
                with Image.open(image) as a, Image.open(label) as b:
                    if a.size != b.size:
                        wrong.append(f'{label} is {b.size[0]}x{b.size[1]}, its image {image} {a.size[0]}x{a.size[1]}')
            except FileNotFoundError as e:
                wrong.append(f'{e.filename} is missing')
            except OSError as e:  # not an image (PIL names the file)
                wrong.append(str(e))
        if wrong:
            shown = '\n  '.join(wrong[:10]) + (f'\n  ... and {len(wrong) - 10} more' if len(wrong) > 10 else '')
            raise ValueError(f'{len(wrong)} of {len(data_list)} label maps do not match their image:\n  {shown}\n'
                             'A label map has the size of its image (same name, .png): resize it with '
                             'nearest-neighbour interpolation or remove the pair. python tools/make_demo_data.py '
                             f'--check {self.data_root} --dataset ade20k lists every problem')

    def _layout_error(self, problem: str):
        raise FileNotFoundError(
            f"ADE20k not found under data_root='{self.data_root}': {problem}.\nExpected layout:\n{LAYOUT}\n"
            f"Put (or symlink) the dataset at data/ade/ADEChallengeData2016, or set data_root in the config "
            f"(configs/_base_/datasets/ade20k.py for every ADE20k config). A small demo copy: "
            f"python tools/make_demo_data.py --out data/demo --scale small")
