"""Oxford Flowers-102 from the three files of the official download: ``102flowers.tgz`` unpacked (``jpg/``),
``imagelabels.mat`` and ``setid.mat``.

The transfer papers train on train + val (2,040 images) and test on the 6,149 test images
(``split='trainval'`` / ``'test'``); ``'train'`` and ``'val'`` are the official halves.
"""
from typing import List, Tuple

from vitbench.registry import DATASETS

from .base import TransferDataset

SETID_KEYS = dict(train=['trnid'], val=['valid'], trainval=['trnid', 'valid'], test=['tstid'])


@DATASETS.register_module()
class Flowers102(TransferDataset):
    LAYOUT = """\
<data_root>/
  jpg/image_00001.jpg ...   the 8,189 images of 102flowers.tgz (RGB JPEG, numbered from 1)
  imagelabels.mat           labels: 1 x 8189, class 1..102 of image_{i:05d}.jpg
  setid.mat                 trnid, valid, tstid: 1 x k image numbers (1-based), disjoint"""
    SPLITS = tuple(SETID_KEYS)
    NUM_CLASSES = 102  # the files carry no class names: classes are '1' ... '102'
    OFFICIAL = dict(classes=NUM_CLASSES, trainval=2040, test=6149)
    IMAGES, LABELS, SETID = 'jpg', 'imagelabels.mat', 'setid.mat'  # the three items of the download

    @staticmethod
    def image_name(number: int) -> str:
        """The file name of image ``number`` (1-based, as imagelabels.mat and setid.mat count)."""
        return f'image_{number:05d}.jpg'

    def load_split(self) -> Tuple[List[str], List[dict]]:
        labels = self.load_mat(self.LABELS, ['labels'])['labels'].ravel()
        if labels.size == 0 or labels.min() < 1 or labels.max() > self.NUM_CLASSES:
            raise self.format_error(self.LABELS, f'labels should be classes 1..{self.NUM_CLASSES}, got '
                                    f'{labels.min() if labels.size else "none"}..{labels.max() if labels.size else ""}')
        setid = self.load_mat(self.SETID, SETID_KEYS[self.split])
        numbers = sorted(int(n) for key in SETID_KEYS[self.split] for n in setid[key].ravel())
        bad = [n for n in numbers if not 1 <= n <= labels.size]
        if bad:
            raise self.format_error(self.SETID, f'image number {bad[0]} is outside 1..{labels.size} '
                                    f'(the images labeled in {self.LABELS})')
        names = [self.image_name(n) for n in numbers]
        self.check_images(self.IMAGES, names, self.SETID)
        classes = [str(c) for c in range(1, self.NUM_CLASSES + 1)]
        return classes, [dict(img_path=self.path(f'{self.IMAGES}/{name}'), gt_label=int(labels[n - 1]) - 1)
                         for n, name in zip(numbers, names)]
