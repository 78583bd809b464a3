"""ImageNet-1k training subsets: a list of the train images to keep, the rest of the dataset as it is.

MAE-lite Table 3 pre-trains on "two subsets of IN1K containing 1% and 10% of the total examples ... balanced in
terms of classes (Assran et al., 2021), one subset with long-tailed class distribution (Liu et al., 2019)". The
first two are SimCLR's lists, which PAWS (Assran et al.) uses; they are shipped in ``pretrain/subsets/`` (sources
in its README) and named by :data:`SHIPPED`. ImageNet-LT's list (OLTR, ``ImageNet_LT_train.txt``) is read from
where the user put it.

A list has one image per line, in either of the two release formats:

    n04235860_14959.JPEG                                   SimCLR's 1percent.txt / 10percent.txt
    train/n01440764/n01440764_10026.JPEG 0                 OLTR's ImageNet_LT_train.txt (path, label)

An image is found by its file name (ImageNet train images are named ``<wnid>_<n>.JPEG``) in its class folder,
and keeps the label it has in the full dataset (its class folder's place among the sorted folders), so that a
model pre-trained on a subset has the full dataset's label space. A label in the list that disagrees, an image
that is not there, or a line in neither format stops the run with one line naming the list, the line and what
was expected.
"""
import os.path as osp
from typing import Dict, List, Sequence

_HERE = osp.dirname(osp.abspath(__file__))
SHIPPED: Dict[str, str] = {  # the subsets that ship with vitbench: name -> file
    'imagenet_1percent': osp.join(_HERE, 'subsets', 'imagenet_1percent.txt'),
    'imagenet_10percent': osp.join(_HERE, 'subsets', 'imagenet_10percent.txt'),
}
FORMATS = "'<wnid>_<n>.JPEG' (SimCLR's subsets) or '<split>/<wnid>/<wnid>_<n>.JPEG <label>' (ImageNet-LT)"


class SubsetError(ValueError):
    """A subset list that cannot be read against the dataset; the message names the list and the line."""


def subset_file(subset: str) -> str:
    """The file of ``subset``: a shipped list's name (:data:`SHIPPED`) or a path."""
    path = SHIPPED.get(subset, subset)
    if not osp.isfile(path):
        raise SubsetError(f"ImageNet subset {subset!r}: no such file; expected one of the shipped lists "
                          f"{sorted(SHIPPED)} or the path of a list of {FORMATS}")
    return path


def read_subset(subset: str, split_dir: str, classes: Sequence[str]) -> List[dict]:
    """The data list (``img_path``, ``gt_label``) of the images ``subset`` names, under ``split_dir`` whose class
    folders are ``classes`` in label order."""
    path = subset_file(subset)
    label_of = {wnid: label for label, wnid in enumerate(classes)}
    data_list, seen = [], set()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            where = f'{path}:{n}'
            if len(fields) > 2 or (len(fields) == 2 and not fields[1].isdigit()):
                raise SubsetError(f'{where}: expected {FORMATS}, got {line.strip()!r}')
            name = osp.basename(fields[0])
            wnid = name.split('_')[0]
            if wnid not in label_of:
                raise SubsetError(f"{where}: {name!r} names class {wnid!r}, which is not a class folder of "
                                  f'{split_dir}')
            if len(fields) == 2 and int(fields[1]) != label_of[wnid]:
                raise SubsetError(f'{where}: label {fields[1]} for {name}, but {wnid} is class {label_of[wnid]} '
                                  f'of the sorted class folders of {split_dir}')
            if name in seen:
                raise SubsetError(f'{where}: {name} is listed twice')
            seen.add(name)
            img_path = osp.join(split_dir, wnid, name)
            if not osp.isfile(img_path):
                raise SubsetError(f'{where}: {img_path} not found (the list is of ImageNet-1k train images)')
            data_list.append(dict(img_path=img_path, gt_label=label_of[wnid]))
    if not data_list:
        raise SubsetError(f'{path}: no images listed; expected {FORMATS}, one per line')
    return data_list
