"""Classification transfer: fine-tune a pre-trained backbone on CIFAR-10/100, Flowers-102, Stanford Cars,
Oxford-IIIT Pets, FGVC Aircraft and iNaturalist 2018/2019, each read in its native on-disk format.

The model, batch augmentation, metric and fine-tuning modes (full / attention-only / linear probe) are the
ImageNet fine-tuning ones of :mod:`pretrain` (``ImageClassifier``, ``ClsDataPreprocessor``, ``Accuracy``);
the head is re-initialised at the dataset's number of classes and its width follows ``--backbone``. What is
here: one dataset class per family, the loading step that also serves CIFAR's in-memory images, and
:class:`TransferCheckHook`. Recipes are configs: ``configs/_base_/transfer_*.py``, ``configs/transfer/``.
"""
from . import record  # noqa: F401  (registers the task's record)
from .aircraft import FGVCAircraft
from .base import TransferDataset
from .cars import StanfordCars
from .cifar import CIFAR10, CIFAR100
from .flowers import Flowers102
from .hooks import TransferCheckHook
from .inat import INaturalist
from .pets import OxfordIIITPet
from .transforms import LoadImageOrArray

__all__ = ['TransferDataset', 'CIFAR10', 'CIFAR100', 'Flowers102', 'StanfordCars', 'OxfordIIITPet', 'FGVCAircraft',
           'INaturalist', 'LoadImageOrArray', 'TransferCheckHook']
