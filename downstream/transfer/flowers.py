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
  jpg/image_00001.jpg ...   the 8,189 images of 102flowers.tgz
  imagelabels.mat           labels: 1 x 8189, class 1..102 of image_{i:05d}.jpg
  setid.mat                 trnid, valid, tstid: 1 x k image numbers (1-based)"""
    SPLITS = tuple(SETID_KEYS)
    OFFICIAL = dict(classes=102, trainval=2040, test=6149)
    NUM_CLASSES = 102  # the files carry no class names: classes are '1' ... '102'

    def load_split(self) -> Tuple[List[str], List[dict]]:
        labels = self.load_mat('imagelabels.mat', ['labels'])['labels'].ravel()
        if labels.size == 0 or labels.min() < 1 or labels.max() > self.NUM_CLASSES:
            raise self.format_error('imagelabels.mat', f'labels should be classes 1..{self.NUM_CLASSES}, got '
                                    f'{labels.min() if labels.size else "none"}..{labels.max() if labels.size else ""}')
        setid = self.load_mat('setid.mat', SETID_KEYS[self.split])
        numbers = sorted(int(n) for key in SETID_KEYS[self.split] for n in setid[key].ravel())
        bad = [n for n in numbers if not 1 <= n <= labels.size]
        if bad:
            raise self.format_error('setid.mat', f'image number {bad[0]} is outside 1..{labels.size} '
                                    '(the images labeled in imagelabels.mat)')
        names = [f'image_{n:05d}.jpg' for n in numbers]
        self.check_images('jpg', names, 'setid.mat')
        classes = [str(c) for c in range(1, self.NUM_CLASSES + 1)]
        return classes, [dict(img_path=self.path(f'jpg/{name}'), gt_label=int(labels[n - 1]) - 1)
                         for n, name in zip(numbers, names)]
