"""Glue that puts a vitbench backbone into other toolboxes and tasks: ``seg`` (mmseg, UperNet on ADE20k),
``det`` (mmdet, Mask R-CNN on COCO), ``transfer`` (classification transfer datasets), and
``backbone_swap`` (``--backbone``, with its task → adapter table).

Importing the package registers its pieces in the ``vitbench`` registries, the OpenMMLab way (configs reach
them through ``custom_imports=dict(imports=['backbones', 'downstream'])``): it imports the package of every task
record that names one (vitbench/results/schema.py), as the registries' ``locations`` do.
"""
import importlib

from vitbench.results.schema import TASKS

for _task in TASKS.values():
    if _task.package:
        importlib.import_module(_task.package)
