"""ImageNet recipes: supervised DeiT III / DeiT (+ distillation), MAE, distilled MAE, MoCo-v3, DINO, BEiT, fine-tuning
(full, attention-only, linear probe, resolution), as registered mmengine components run by tools/train.py.

Importing the package registers everything in the ``vitbench`` scope, and the records of its two tasks
(``record.py``: pre-training and fine-tuning).
"""
from . import optim  # noqa: F401  (registers timm's Lamb)
from . import record  # noqa: F401  (registers the pre-training and fine-tuning records)
from .beit import BEiT
from .beit_data import BEiTMaskedViews
from .beit_tokenizer import DALLETokenizer, KMeansTokenizer
from .classifier import ClsLoss, ImageClassifier
from .data import ImageNet
from .dino import DINO, DINODistributedDataParallel, DINOHead, DINOScheduleHook
from .dmae import DistilledMAE
from .export import BackboneExportHook
from .grafit import Grafit
from .extra_eval import ExtraSetsValLoop
from .finetune import apply_trainable, trainable_names
from .imagenet_variants import ImageNetReaL, ImageNetV2
from .imagenet21k import ImageNet21k
from .mae import MAE, MAEDecoder, random_masking
from .mae_vis import MAEVisualizationHook
from .mocov3 import MoCoMomentumHook, MoCoV3
from .metrics import Accuracy, ReaLAccuracy, ReconstructionLoss
from .preprocessor import ClsDataPreprocessor
from .robustness import ImageNetA, ImageNetC, ImageNetR, ImageNetSketch
from .robustness_metrics import AccuracyWithCalibration, CalibrationError, ClassSubsetAccuracy, CorruptionError
from .samplers import RepeatAugSampler
from .ssl_transforms import GaussianBlur, MultiView, RandomColorJitter, RandomGrayscale, Solarize
from .transforms import (ColorJitter, LoadImage, PackInputs, RandAugment, RandomHorizontalFlip, RandomResizedCrop,
                         ResizeCenterCrop, SimpleRandomCrop, ThreeAugment)

__all__ = ['ImageClassifier', 'ClsLoss', 'Grafit', 'MAE', 'MAEDecoder', 'DistilledMAE', 'random_masking', 'ImageNet',
           'ImageNetV2', 'ImageNetReaL', 'ImageNet21k', 'ImageNetA', 'ImageNetR', 'ImageNetSketch', 'ImageNetC',
           'ExtraSetsValLoop', 'ClsDataPreprocessor', 'RepeatAugSampler', 'Accuracy', 'ReaLAccuracy',
           'ReconstructionLoss', 'ClassSubsetAccuracy', 'CorruptionError', 'CalibrationError',
           'AccuracyWithCalibration', 'BackboneExportHook',
           'MAEVisualizationHook', 'apply_trainable', 'trainable_names', 'LoadImage', 'RandomResizedCrop',
           'SimpleRandomCrop', 'ThreeAugment', 'ColorJitter', 'RandAugment', 'RandomHorizontalFlip',
           'ResizeCenterCrop', 'PackInputs', 'MoCoV3', 'MoCoMomentumHook', 'MultiView', 'RandomColorJitter',
           'RandomGrayscale', 'GaussianBlur', 'Solarize',
           'DINO', 'DINOHead', 'DINOScheduleHook', 'DINODistributedDataParallel', 'BEiT', 'BEiTMaskedViews',
           'DALLETokenizer', 'KMeansTokenizer']
