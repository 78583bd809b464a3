"""mmdet's CocoDataset, failing with the expected folder layout when ``data_root`` is wrong.

Without these checks mmdet stops on a bare ``FileNotFoundError`` from pycocotools (no annotation file) or a
``JSONDecodeError`` that does not name the file (a truncated one), only fails when the first image is read (no
image folder), or — worse — trains silently on a wrong label mapping when a configured class name is not in the
annotation file (``get_cat_ids`` just leaves it out) or lists the classes in another order than the file (labels
follow the file's order, names the config's). It also drops, without a word, the annotations whose
``category_id`` is not a category of the file, whose ``image_id`` is no image of it, or whose box lies outside its
image: these are errors here, or with ``skip_invalid_annotations=True`` left out and counted in the log.
"""
import collections
import json
import os.path as osp
from typing import Dict, List, Optional

from mmdet.datasets import CocoDataset as _MMDetCocoDataset
from mmengine.logging import print_log

from vitbench.compat.mmdet import load_coco_data_list
from vitbench.registry import DATASETS
from vitbench.sample_error import prepare_named

# The image folders of the 2017 release and their annotation files (the configs' data_prefix and ann_file).
SPLITS = ('train2017', 'val2017')
ANNOTATIONS = 'annotations/instances_{split}.json'
LAYOUT = """\
  <data_root>/                            e.g. data/coco
    train2017/000000000009.jpg ...        the 118k training images, RGB JPEG named by image id (12 digits)
    val2017/000000000139.jpg ...          the 5k validation images
    annotations/instances_train2017.json  COCO instances format, a dict of "info", "licenses", "images",
    annotations/instances_val2017.json    "annotations" and "categories" (the 80 classes); images[i]: id,
                                          file_name, width, height; annotations[j]: id, image_id, category_id,
                                          bbox [x,y,w,h], area, iscrowd, segmentation (polygons, or RLE
                                          {"counts", "size"})"""


@DATASETS.register_module(name='CocoDataset')
class CocoDataset(_MMDetCocoDataset):
    """``type='vitbench.CocoDataset'``: mmdet's ``CocoDataset`` and its arguments, plus
    ``skip_invalid_annotations``: leave out (and count in the log) the annotations mmdet would drop silently,
    instead of stopping on them."""

    def __init__(self, *args, skip_invalid_annotations: bool = False, **kwargs):
        self.skip_invalid_annotations = skip_invalid_annotations
        super().__init__(*args, **kwargs)

    def prepare_data(self, idx):
        return prepare_named(self, idx, super().prepare_data)  # an unreadable sample is named, in one line

    def load_data_list(self):
        if not osp.isfile(self.ann_file):
            self._layout_error(f'there is no annotation file {self.ann_file}')
        folder = self.data_prefix.get('img')
        if folder and not osp.isdir(folder):
            self._layout_error(f'there is no image folder {folder}')

        def open_annotations(api, path):  # mmdet drops its COCO object after loading; keep the categories
            try:
                coco = api(path)
            except json.JSONDecodeError as e:  # pycocotools' json.load, which does not say which file
                raise ValueError(f'{self.ann_file}: not valid JSON ({e}); the file is probably truncated: '
                                 'download or copy it again') from None
            self._categories = [coco.cats[i]['name'] for i in coco.get_cat_ids()]  # in the file's order
            self._check_annotations(coco)
            return coco
        data_list = load_coco_data_list(self, super().load_data_list, open_annotations)
        self._check_classes(tuple(self.metainfo['classes']))
        if not data_list:
            self._layout_error(f'{self.ann_file} lists no images')
        return data_list

    def _check_classes(self, classes):
        """Every configured class is a category of the file, listed in the file's order: mmdet numbers the
        labels in category-id order whatever the order of ``classes``, so names and labels would disagree."""
        unknown = [c for c in classes if c not in self._categories]
        if unknown:
            raise ValueError(f'{self.ann_file}: the classes {unknown} are not categories of this file '
                             f'(it has {self._categories}); fix metainfo.classes in the dataset config')
        in_file_order = [c for c in self._categories if c in classes]
        if in_file_order != list(classes):
            raise ValueError(f'{self.ann_file}: metainfo.classes must follow the order of the categories in the '
                             f'file, {in_file_order} (mmdet numbers the labels in that order), got {list(classes)}')

    def _check_annotations(self, coco):
        """The annotations mmdet would drop without a word: an unknown ``category_id`` (a whole class can go
        missing), an ``image_id`` without an image, a box with no pixel inside its image."""
        annotations = coco.dataset.get('annotations', [])
        invalid: Dict[str, List[dict]] = collections.defaultdict(list)
        for ann in annotations:
            reason = _invalid(ann, coco)
            if reason:
                invalid[reason].append(ann)
        if not invalid:
            return
        found = [f'{len(anns)} of {len(annotations)} annotations: {reason} (e.g. '
                 f'{json.dumps({k: anns[0].get(k) for k in ("id", "image_id", "category_id", "bbox")})})'
                 for reason, anns in invalid.items()]
        if not self.skip_invalid_annotations:
            raise ValueError(f'{self.ann_file}: annotations that mmdet would drop silently:\n  ' + '\n  '.join(found)
                             + '\nFix the annotation file, or leave them out (counted in the log) with '
                             'skip_invalid_annotations=True in the dataset config')
        print_log(f'{self.ann_file}: left out {sum(map(len, invalid.values()))} invalid annotations '
                  '(skip_invalid_annotations=True): ' + '; '.join(found), logger='current', level=30)

    def _layout_error(self, problem: str):
        raise FileNotFoundError(
            f"COCO not found under data_root='{self.data_root}': {problem}.\nExpected layout:\n{LAYOUT}\n"
            f"Put (or symlink) the dataset at data/coco, or set data_root in the config "
            f"(configs/_base_/datasets/coco_instance_lsj.py for every COCO config). A small demo copy: "
            f"python tools/make_demo_data.py --out data/demo --scale small --datasets coco")


def _invalid(ann: dict, coco) -> Optional[str]:
    """Why mmdet would drop ``ann`` silently, or None."""
    if ann.get('category_id') not in coco.cats:
        return "category_id is not among the file's categories"
    image = coco.imgs.get(ann.get('image_id'))
    if image is None:
        return "image_id is not among the file's images"
    if 'bbox' in ann:
        x, y, w, h = ann['bbox']
        if x >= image['width'] or y >= image['height'] or x + w <= 0 or y + h <= 0:
            return 'bbox lies outside its image (no pixel inside it)'
    return None
