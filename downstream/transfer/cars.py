"""Stanford Cars from its devkit: ``cars_{train,test}/*.jpg`` and the MATLAB annotation structs.

``devkit/cars_meta.mat`` names the classes (``class_names``, 1 x 196); ``devkit/cars_train_annos.mat`` and
``cars_test_annos_withlabels.mat`` (released after the devkit, whose own test file has no labels) hold
``annotations``, a 1 x N struct array with ``fname`` and ``class`` (1-based) among its fields. Whole images are
used, as in the transfer papers (the boxes are not read).
"""
from typing import List, Tuple

import numpy as np

from vitbench.registry import DATASETS

from .base import TransferDataset


@DATASETS.register_module()
class StanfordCars(TransferDataset):
    LAYOUT = """\
<data_root>/
  devkit/cars_meta.mat             class_names: 1 x 196 cell of strings
  devkit/cars_train_annos.mat      annotations: 1 x N struct with fields bbox_x1, bbox_y1, bbox_x2, bbox_y2
                                   (1-based pixels), class (1..196), fname
  devkit/cars_test_annos.mat       the same for the test images, without class
  cars_test_annos_withlabels.mat   the same for the test images, with class (or in devkit/)
  cars_train/00001.jpg ...
  cars_test/00001.jpg ..."""
    SPLITS = ('train', 'test')
    OFFICIAL = dict(classes=196, train=8144, test=8041)
    META = 'devkit/cars_meta.mat'
    ANNOTATIONS = dict(train=('devkit/cars_train_annos.mat',),  # where to look, in order
                       test=('cars_test_annos_withlabels.mat', 'devkit/cars_test_annos_withlabels.mat'))
    UNLABELED_TEST = 'devkit/cars_test_annos.mat'  # the devkit's own test file: no class, so not readable
    IMAGES = dict(train='cars_train', test='cars_test')

    def load_split(self) -> Tuple[List[str], List[dict]]:
        classes = [str(np.squeeze(n)) for n in self.load_mat(self.META, ['class_names'])['class_names'].ravel()]
        rel, *alternatives = self.ANNOTATIONS[self.split]
        annos = self.load_mat(rel, ['annotations'], *alternatives)['annotations'].ravel()
        if annos.dtype.names is None or not {'fname', 'class'} <= set(annos.dtype.names):
            raise self.format_error(rel, 'annotations should be a struct array with the fields fname and class '
                                    f'(the test file without labels is {self.UNLABELED_TEST}: use '
                                    f'cars_test_annos_withlabels.mat), got fields {annos.dtype.names}')
        samples = [(str(np.squeeze(a['fname'])), int(np.squeeze(a['class']))) for a in annos]
        bad = [(f, c) for f, c in samples if not 1 <= c <= len(classes)]
        if bad:
            raise self.format_error(rel, f'{bad[0][0]}: class {bad[0][1]} is outside 1..{len(classes)} '
                                    f'({self.META} class_names)')
        folder = self.IMAGES[self.split]
        self.check_images(folder, [f for f, _ in samples], rel)
        return classes, [dict(img_path=self.path(f'{folder}/{f}'), gt_label=c - 1) for f, c in samples]
