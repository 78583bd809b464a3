"""What every demo dataset provides, and the helpers its layout checker reports problems with."""
import json
import os
from dataclasses import dataclass
from typing import Callable

import scipy.io
from PIL import Image

from pretrain.data import IMG_EXTENSIONS

SCALES = ('tiny', 'small')
COCO_LISTS = ('images', 'annotations', 'categories')  # what a COCO-style annotation file (COCO, iNat) lists


@dataclass(frozen=True)
class DemoDataset:
    """One dataset format: how to make a demo copy of it and how to check any copy (demo or real).

    Generation is map-reduce so items can be made in any order or in parallel: ``plan(scale, seed)``
    lists picklable items, ``make_item(root, seed, item)`` writes that item's files under ``root`` (the
    data root) and returns a small record, ``finish(root, seed, scale, items, records)`` writes the
    annotation / index files.
    ``check(data_root)`` returns a list of problems, each "relative/path: what is wrong, what was expected".
    """
    name: str
    data_root: str  # relative to the demo root; what configs point ``data_root`` at
    layout: str  # the expected layout under data_root (the reader's LAYOUT), shown with every report
    plan: Callable
    make_item: Callable
    finish: Callable
    check: Callable

    @property
    def folder(self):
        """The top-level folder under the demo root that generation creates (atomically)."""
        return self.data_root.split('/')[0]


class Report:
    """Collects layout problems as 'path relative to the dataset root: what is wrong (what was expected)'."""

    def __init__(self, root):
        self.root = root
        self.problems = []

    def path(self, rel):
        return os.path.join(self.root, rel)

    def add(self, rel, message):
        self.problems.append(f'{rel}: {message}')

    def need_dir(self, rel, what):
        if os.path.isdir(self.path(rel)):
            return True
        self.add(rel + '/', f'missing directory (expected {what})')
        return False

    def need_file(self, rel, what):
        if os.path.isfile(self.path(rel)):
            return True
        self.add(rel, f'missing file (expected {what})')
        return False

    def image_size(self, rel):
        """(width, height) from the image header, or None (and a problem) if it is missing or unreadable."""
        try:
            with Image.open(self.path(rel)) as im:
                return im.size
        except FileNotFoundError:
            self.add(rel, 'missing image')
        except OSError as e:
            self.add(rel, f'unreadable image ({e})')
        return None

    def load_mat(self, rel, keys):
        """The variables of a .mat file as scipy.io.loadmat reads them, or None (and a problem)."""
        if not self.need_file(rel, f'a MATLAB file with {", ".join(keys)}'):
            return None
        try:
            mat = scipy.io.loadmat(self.path(rel))
        except Exception as e:  # scipy raises several types for a damaged file
            self.add(rel, f'cannot be read by scipy.io.loadmat ({type(e).__name__}: {e})')
            return None
        missing = [k for k in keys if k not in mat]
        if missing:
            self.add(rel, f'lacks {missing} (expected {keys})')
            return None
        return mat

    def load_coco_json(self, rel, what):
        """A COCO-style annotation file (COCO's, iNaturalist's) as a dict with a list under each of
        ``COCO_LISTS``, or None (and a problem). ``what`` says what the file is when it is missing."""
        if not self.need_file(rel, what):
            return None
        try:
            with open(self.path(rel)) as f:
                data = json.load(f)
        except ValueError as e:
            self.add(rel, f'not valid JSON ({e})')
            return None
        missing = [k for k in COCO_LISTS if not (isinstance(data, dict) and isinstance(data.get(k), list))]
        if missing:
            self.add(rel, f'no list under {missing} (expected lists under {", ".join(COCO_LISTS)})')
            return None
        return data


def reader_problems(reader, root, rel):
    """A format whose reader is its check: its error (wrong length, missing image, not a class index ...) as the
    one problem at ``rel``, or none."""
    try:
        reader(data_root=root)
    except (ValueError, FileNotFoundError) as e:
        return [f'{rel}: {str(e).splitlines()[0]}']
    return []


def image_files(root):
    """Every image under ``root`` (the suffixes the readers take), as sorted paths relative to it."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        found += [os.path.relpath(os.path.join(folder, n), root) for n in sorted(names)
                  if n.lower().endswith(IMG_EXTENSIONS)]
    return found


def decode_problem(root, rel):
    """'rel: what is wrong' if the image ``root/rel`` does not decode in full, else None. Decoding, not the
    header: a truncated file keeps its header, and a reader only fails on it when it reaches it mid-run."""
    try:
        with Image.open(os.path.join(root, rel)) as im:
            im.load()
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as e:  # PIL's ways to fail
        return f'{rel}: does not decode ({e}); the file is truncated or damaged: copy or download it again'
    return None


def list_files(path, suffix):
    """Sorted names in ``path`` ending with ``suffix`` (case-insensitive); empty if ``path`` is missing."""
    if not os.path.isdir(path):
        return []
    return sorted(n for n in os.listdir(path) if n.lower().endswith(suffix.lower()))


def split_sizes(scale, sizes):
    """``sizes[scale]``, with a clear error for an unknown scale."""
    if scale not in sizes:
        raise ValueError(f'unknown scale {scale!r}; expected one of {tuple(sizes)}')
    return sizes[scale]


def numbered_items(scale, sizes, splits):
    """The plan of a dataset whose pictures are numbered per split: items (split, k, short side) for k in
    0 .. ``sizes[scale][split]`` - 1, split by split."""
    size = split_sizes(scale, sizes)
    return [(split, k, size['short']) for split in splits for k in range(size[split])]
