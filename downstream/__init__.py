"""Glue that puts a vitbench backbone into other toolboxes and tasks: ``seg`` (mmseg, UperNet on ADE20k),
``det`` (mmdet, Mask R-CNN on COCO), ``transfer`` (classification transfer datasets), and
``backbone_swap`` (``--backbone``, with its task → adapter table).

Importing the package registers its pieces in the ``vitbench`` registries, the OpenMMLab way (configs reach
them through ``custom_imports=dict(imports=['backbones', 'downstream'])``); the registries also list them as
``locations``.
"""
from . import det, seg, transfer  # noqa: F401
