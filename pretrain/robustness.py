"""ImageNet-A, ImageNet-R, ImageNet-Sketch and ImageNet-C in their release layouts: the robustness test sets of an
ImageNet-1k classifier, read so that the classifier is scored on them as on ImageNet val.

- ImageNet-A (Hendrycks et al., 2021, natural adversarial examples) and ImageNet-R (Hendrycks et al., 2021,
  renditions): one folder per class, 200 classes each, a subset of the 1000 (``A_WNIDS`` / ``R_WNIDS``). Their
  papers score a 1k model by its argmax over those 200 classes' logits
  (:class:`pretrain.robustness_metrics.ClassSubsetAccuracy`).
- ImageNet-Sketch (Wang et al., 2019): one folder per class of the 1000.
- ImageNet-C (Hendrycks & Dietterich, 2019): the val images under 15 corruptions at 5 severities,
  ``<corruption>/<severity>/<wnid>/<image>``. One :class:`ImageNetC` reads every (corruption, severity) folder it
  is given (by default all 15 benchmark corruptions found, severities 1-5) and tags each image with them, so that one
  evaluation yields every corruption's error and the mCE (:class:`pretrain.robustness_metrics.CorruptionError`).

Labels are ImageNet-1k indices: a wnid's place among the 1000 sorted wnids, as ImageFolder numbers ImageNet's
classes. The class lists are those of the datasets' repositories (hendrycks/natural-adv-examples,
hendrycks/imagenet-r), as timm ships them (``timm/data/_info``). A folder in the wrong layout stops the run with one
line naming it and what was expected, followed by the expected tree.
"""
import functools
import os
import os.path as osp
import pkgutil
from typing import Dict, List, Sequence, Tuple, Union

from vitbench.compat.mmengine import set_dataset_classes
from vitbench.registry import DATASETS

from .data import DatasetLayoutError, ImageNet, image_names

# ImageNet-C's benchmark corruptions in the paper's order and groups (Hendrycks & Dietterich 2019, Figure 1); the
# mCE averages over these 15
CORRUPTION_GROUPS: Dict[str, Tuple[str, ...]] = {
    'noise': ('gaussian_noise', 'shot_noise', 'impulse_noise'),
    'blur': ('defocus_blur', 'glass_blur', 'motion_blur', 'zoom_blur'),
    'weather': ('snow', 'frost', 'fog', 'brightness'),
    'digital': ('contrast', 'elastic_transform', 'pixelate', 'jpeg_compression'),
}
CORRUPTIONS: Tuple[str, ...] = sum(CORRUPTION_GROUPS.values(), ())
EXTRA_CORRUPTIONS = ('speckle_noise', 'gaussian_blur', 'spatter', 'saturate')  # extra.tar: held out of the mCE
ALL_CORRUPTIONS = CORRUPTIONS + EXTRA_CORRUPTIONS  # a sample's 'corruption' is its index here
SEVERITIES = (1, 2, 3, 4, 5)
CORRUPTION, SEVERITY = 'corruption', 'severity'  # the data_samples keys CorruptionError reads

A_LAYOUT = """\
<data_root>/                   the unpacked imagenet-a.tar, e.g. data/imagenet-a
  <wnid>/<image>.jpg           one folder per class of ImageNet-A's 200 (ImageNet-1k wnids), e.g. n01498041/"""
R_LAYOUT = """\
<data_root>/                   the unpacked imagenet-r.tar, e.g. data/imagenet-r
  <wnid>/<image>.jpg           one folder per class of ImageNet-R's 200 (ImageNet-1k wnids), e.g. n01443537/"""
SKETCH_LAYOUT = """\
<data_root>/                   the sketch/ folder of the unpacked ImageNet-Sketch.zip, e.g. data/imagenet-sketch/sketch
  <wnid>/<image>.JPEG          one folder per ImageNet-1k class (1000), e.g. n01440764/sketch_0.JPEG"""
C_LAYOUT = f"""\
<data_root>/                                 the unpacked noise/blur/weather/digital.tar, e.g. data/imagenet-c
  <corruption>/<severity>/<wnid>/<image>.JPEG  e.g. gaussian_noise/3/n01440764/ILSVRC2012_val_00000293.JPEG;
                                             corruptions {', '.join(CORRUPTIONS)}
                                             (extra.tar: {', '.join(EXTRA_CORRUPTIONS)}); severities 1-5"""


def _timm_class_list(name: str) -> Tuple[str, ...]:
    try:
        data = pkgutil.get_data('timm.data', f'_info/{name}')
    except OSError as e:
        raise FileNotFoundError(f'timm/data/_info/{name}: not found ({e}); the ImageNet class lists come with '
                                'timm>=1.0 (pip install timm)') from e
    return tuple(data.decode().split())


@functools.lru_cache(maxsize=None)
def imagenet_1k_wnids() -> Tuple[str, ...]:
    """The 1000 ImageNet-1k wnids in label order (sorted, as ImageFolder numbers the class folders)."""
    return _timm_class_list('imagenet_synsets.txt')


@functools.lru_cache(maxsize=None)
def class_subset(name: str) -> Tuple[str, ...]:
    """The 200 wnids of 'imagenet_a' or 'imagenet_r', sorted."""
    files = {'imagenet_a': 'imagenet_a_synsets.txt', 'imagenet_r': 'imagenet_r_synsets.txt'}
    if name not in files:
        raise ValueError(f'class subset {name!r}: expected one of {sorted(files)}')
    return _timm_class_list(files[name])


@functools.lru_cache(maxsize=None)
def class_subset_indices(name: str) -> Tuple[int, ...]:
    """The ImageNet-1k indices of ``class_subset(name)``: the logits that ImageNet-A / -R evaluation keeps."""
    index = {w: i for i, w in enumerate(imagenet_1k_wnids())}
    return tuple(index[w] for w in class_subset(name))


class _WnidFolders(ImageNet):
    """A test set of ``<data_root>/<wnid>/<image>`` folders whose wnids are among ``wnids()``; labels are 1k
    indices. Missing class folders are allowed (a partial download still scores what it holds)."""
    title = ''
    layout = ''

    def __init__(self, data_root: str, pipeline=(), test_mode: bool = True, **kwargs):
        super().__init__(data_root=data_root, split='', pipeline=pipeline, test_mode=test_mode, **kwargs)

    def wnids(self) -> Sequence[str]:
        raise NotImplementedError

    def _layout_error(self, problem: str) -> DatasetLayoutError:
        return DatasetLayoutError(f'{self.title} at {osp.normpath(self.split_dir)}: {problem}. Expected the release '
                                  f'layout:\n{self.layout}')

    def load_data_list(self) -> List[dict]:
        if not osp.isdir(self.split_dir):
            raise self._layout_error('folder not found')
        data_list = _wnid_folders(self.split_dir, self.wnids(), self._layout_error, self.title)
        set_dataset_classes(self, imagenet_1k_wnids())
        return data_list


def _wnid_folders(folder: str, allowed: Sequence[str], error, what: str) -> List[dict]:
    """The images of ``folder/<wnid>/`` labelled by ImageNet-1k index; ``error(problem)`` for a folder that is not
    one of ``allowed``, or none with images."""
    folders = sorted(e.name for e in os.scandir(folder) if e.is_dir())
    allowed_set = set(allowed)
    unknown = [f for f in folders if f not in allowed_set]
    if unknown:
        raise error(f'folders {unknown[:5]} are not wnids of the {len(allowed)} classes of {what}')
    index = {w: i for i, w in enumerate(imagenet_1k_wnids())}
    data_list = [dict(img_path=osp.join(folder, name, f), gt_label=index[name])
                 for name in folders for f in image_names(osp.join(folder, name))]
    if not data_list:
        raise error('no images in class folders' if folders else 'no class folders')
    return data_list


@DATASETS.register_module()
class ImageNetA(_WnidFolders):
    """ImageNet-A in its release layout (A_LAYOUT); ``data_root`` is the folder of the class folders."""
    title, layout = 'ImageNet-A', A_LAYOUT

    def wnids(self):
        return class_subset('imagenet_a')


@DATASETS.register_module()
class ImageNetR(_WnidFolders):
    """ImageNet-R in its release layout (R_LAYOUT); ``data_root`` is the folder of the class folders."""
    title, layout = 'ImageNet-R', R_LAYOUT

    def wnids(self):
        return class_subset('imagenet_r')


@DATASETS.register_module()
class ImageNetSketch(_WnidFolders):
    """ImageNet-Sketch in its release layout (SKETCH_LAYOUT); ``data_root`` is its ``sketch/`` folder."""
    title, layout = 'ImageNet-Sketch', SKETCH_LAYOUT

    def wnids(self):
        return imagenet_1k_wnids()


def _as_tuple(value, default: tuple) -> tuple:
    if value is None:
        return default
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


@DATASETS.register_module()
class ImageNetC(ImageNet):
    """ImageNet-C in its release layout (C_LAYOUT); ``data_root`` holds the corruption folders.

    Args:
        corruptions: a corruption name or a list of them; default: every one of the 15 benchmark corruptions
            whose folder is there (the extra four only when named).
        severities: a severity or a list of them; default 1-5 (what the mCE needs). Each corruption read must
            have every severity asked for.

    Each sample carries its corruption (index into ALL_CORRUPTIONS) and severity as ``data_samples['corruption']``
    and ``data_samples['severity']``.
    """

    def __init__(self, data_root: str, corruptions: Union[str, Sequence[str], None] = None,
                 severities: Union[int, Sequence[int], None] = None, pipeline=(), test_mode: bool = True,
                 **kwargs):
        self.corruptions = _as_tuple(corruptions, ())
        self.severities = _as_tuple(severities, SEVERITIES)
        super().__init__(data_root=data_root, split='', pipeline=pipeline, test_mode=test_mode, **kwargs)

    def _layout_error(self, problem: str) -> DatasetLayoutError:
        return DatasetLayoutError(f'ImageNet-C at {osp.normpath(self.split_dir)}: {problem}. Expected the release '
                                  f'layout:\n{C_LAYOUT}')

    def _corruptions_to_read(self) -> Tuple[str, ...]:
        unknown = [c for c in self.corruptions if c not in ALL_CORRUPTIONS]
        if unknown:
            raise ValueError(f'ImageNetC corruptions={list(self.corruptions)}: {unknown} are not ImageNet-C '
                             f'corruptions; expected some of {list(ALL_CORRUPTIONS)}')
        bad = [s for s in self.severities if s not in SEVERITIES]
        if bad:
            raise ValueError(f'ImageNetC severities={list(self.severities)}: {bad} are not severities; expected '
                             f'some of {list(SEVERITIES)}')
        if not osp.isdir(self.split_dir):
            raise self._layout_error('folder not found')
        folders = sorted(e.name for e in os.scandir(self.split_dir) if e.is_dir())
        groups = [f for f in folders if f in CORRUPTION_GROUPS or f == 'extra']
        if groups:
            raise self._layout_error(f'group folders {groups} hold the corruption folders; move their contents up '
                                     'so that each corruption folder is directly in the data root')
        unknown = [f for f in folders if f not in ALL_CORRUPTIONS]
        if unknown:
            raise self._layout_error(f'folders {unknown[:5]} are not ImageNet-C corruptions')
        if self.corruptions:
            missing = [c for c in self.corruptions if c not in folders]
            if missing:
                raise self._layout_error(f'corruption folders {missing} not found')
            return self.corruptions
        found = tuple(c for c in CORRUPTIONS if c in folders)
        if not found:
            raise self._layout_error('none of the 15 benchmark corruption folders found')
        return found

    def load_data_list(self) -> List[dict]:
        data_list = []
        for corruption in self._corruptions_to_read():
            for severity in self.severities:
                folder = osp.join(self.split_dir, corruption, str(severity))
                if not osp.isdir(folder):
                    raise self._layout_error(f'{corruption}/{severity}/ not found (each corruption needs the '
                                             f'severity folders {list(self.severities)})')
                what = f'ImageNet-1k ({corruption}/{severity}/)'
                images = _wnid_folders(folder, imagenet_1k_wnids(), self._layout_error, what)
                tags = dict(corruption=ALL_CORRUPTIONS.index(corruption), severity=severity)
                data_list += [dict(info, **tags) for info in images]
        set_dataset_classes(self, imagenet_1k_wnids())
        return data_list

    def prepare_data(self, idx: int):
        packed = super().prepare_data(idx)
        info = self.get_data_info(idx)
        packed['data_samples'][CORRUPTION] = info[CORRUPTION]
        packed['data_samples'][SEVERITY] = info[SEVERITY]
        return packed
