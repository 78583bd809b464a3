"""Detection and instance segmentation with mmdetection: Mask R-CNN on a plain ViT / CaiT, ViTDet-style.

mmdet provides nearly everything: ``MaskRCNN``, the 2-conv ``RPNHead``, ``Shared4Conv1FCBBoxHead`` and
``FCNMaskHead`` (with a norm), ``CocoDataset``, the large-scale-jitter transforms and ``CocoMetric``;
windowed attention is an option of the vitbench backbone and layer-wise LR decay is
``vitbench.LayerDecayOptimWrapperConstructor``. What is here:

- ``vitbench.CocoDataset``: mmdet's, with an error showing the expected layout for a wrong ``data_root``
  and one naming configured classes the annotation file lacks;
- ``vitbench.SimpleFeaturePyramid``: ViTDet's pyramid from the backbone's last map;
- ``vitbench.LN2d``: LayerNorm over channels, the norm of that pyramid and of the RoI heads;
- ``vitbench.CocoMetric``: mmdet's, also publishing the per-image matches behind box and mask AP (the
  leaderboard's interval over the test images);
- the ``--backbone`` adapter that keeps pyramid width, scales and global blocks consistent with the new
  backbone.
"""

from . import record  # noqa: F401  (registers the task's record)
from .datasets import CocoDataset
from .metrics import CocoMetric
from .neck import LayerNorm2d, SimpleFeaturePyramid
from .swap import global_blocks, pyramid_scales

__all__ = ['CocoDataset', 'CocoMetric', 'LayerNorm2d', 'SimpleFeaturePyramid', 'global_blocks', 'pyramid_scales']
