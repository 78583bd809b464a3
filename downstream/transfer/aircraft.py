"""FGVC-Aircraft 2013b: ``data/images/<id>.jpg`` and the text lists ``data/images_<level>_<split>.txt``.

A list line is ``<image id> <name>`` (names may contain spaces); the classes are the names of
``data/variants.txt`` (100, the level the transfer papers use), ``families.txt`` (70) or
``manufacturers.txt`` (30), in file order. The standard transfer split is trainval (6,667) / test (3,333).
"""
from typing import List, Tuple

from vitbench.registry import DATASETS

from .base import TransferDataset

LEVELS = dict(variant='variants.txt', family='families.txt', manufacturer='manufacturers.txt')


@DATASETS.register_module()
class FGVCAircraft(TransferDataset):
    """Args:
        level: 'variant' (default), 'family' or 'manufacturer'.
    """
    LAYOUT = """\
<data_root>/data/                                 (the unpacked fgvc-aircraft-2013b.tar.gz)
  images/1025794.jpg ...                          named by a 7-digit image id
  variants.txt, families.txt, manufacturers.txt   one class name per line, per level
  images_variant_{train,val,trainval,test}.txt    "<image id> <variant name>" per line (also _family_,
                                                  _manufacturer_)
  images_box.txt                                  "<image id> xmin ymin xmax ymax" per line"""
    SPLITS = ('train', 'val', 'trainval', 'test')
    OFFICIAL = dict(classes=100, trainval=6667, test=3333)
    DATA = 'data'  # everything is in here: the class lists of LEVELS, the split lists and images/
    IMAGES = 'data/images'
    SPLIT_LIST = 'data/images_{level}_{split}.txt'  # "<image id> <name>" lines

    def __init__(self, data_root: str, split: str, level: str = 'variant', **kwargs):
        if level not in LEVELS:
            raise ValueError(f'FGVCAircraft: level must be one of {tuple(LEVELS)}, got {level!r}')
        self.level = level
        super().__init__(data_root, split, **kwargs)

    def load_split(self) -> Tuple[List[str], List[dict]]:
        names_file = f'{self.DATA}/{LEVELS[self.level]}'
        classes = [name for _, name in self.read_lines(names_file)]
        index = {name: i for i, name in enumerate(classes)}
        rel = self.SPLIT_LIST.format(level=self.level, split=self.split)
        samples = []
        for n, line in self.read_lines(rel):
            image, _, name = line.partition(' ')
            if name not in index:
                raise self.format_error(rel, f'line {n} {line!r}: expected "<image id> <name>" with a name '
                                        f'listed in {names_file}')
            samples.append((image + '.jpg', index[name]))
        self.check_images(self.IMAGES, [f for f, _ in samples], rel)
        return classes, [dict(img_path=self.path(f'{self.IMAGES}/{f}'), gt_label=c) for f, c in samples]
