"""Glue that puts a vitbench backbone into other toolboxes and tasks: ``seg`` (mmseg, UperNet on ADE20k),
``det`` (mmdet, Mask R-CNN on COCO), ``transfer`` (classification transfer datasets), and
``backbone_swap`` (``--backbone``, with its task → adapter table).

Importing the package registers its pieces in the ``vitbench`` registries, the OpenMMLab way (configs reach
them through ``custom_imports=dict(imports=['backbones', 'downstream'])``; the registries' ``locations`` name this
package): it imports each task package of the suite, and each registers its components and its record
(``record.py``). A task of the suite adds its package here.
"""
from . import det, seg, transfer  # noqa: F401
