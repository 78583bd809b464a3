"""Semantic segmentation with mmsegmentation: UperNet (and MAE-lite's Semantic FPN) on a plain ViT / CaiT.

mmseg provides nearly everything: ``Feature2Pyramid`` (the 4 / 2 / 1 / 0.5 rescale neck of BEiT, MAE and
XCiT), ``UPerHead``, the auxiliary ``FCNHead``, ADE20k's loader and pipelines, ``IoUMetric`` and
``SegTTAModel``; layer-wise LR decay is ``vitbench.LayerDecayOptimWrapperConstructor``. What is here:

- ``vitbench.ADE20KDataset``: mmseg's, with an error showing the expected layout for a wrong ``data_root``;
- ``vitbench.PerClassIoUMetric``: mmseg's ``IoUMetric`` that also returns the IoU of each class;
- ``vitbench.ScaledFeature2Pyramid``: MAE-lite's narrowed rescale neck for its Semantic FPN (``FPNHead``);
- the ``--backbone`` adapter that keeps neck and head widths consistent with the new backbone.
"""

from . import record  # noqa: F401  (registers the task's record)
from .datasets import ADE20KDataset
from .metrics import PerClassIoUMetric
from .neck import ScaledFeature2Pyramid
from .swap import head_channels, pyramid_indices

__all__ = ['ADE20KDataset', 'PerClassIoUMetric', 'ScaledFeature2Pyramid', 'head_channels', 'pyramid_indices']
