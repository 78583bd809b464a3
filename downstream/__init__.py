"""Glue that puts a vitbench backbone into other toolboxes and tasks: ``seg`` (mmseg, UperNet on ADE20k),
``det`` (mmdet, Mask R-CNN on COCO), ``transfer`` (classification transfer datasets), and
``backbone_swap`` (``--backbone``, with its task → adapter table).

Importing the package registers its pieces in the ``vitbench`` registries, the OpenMMLab way (configs reach
them through ``custom_imports=dict(imports=['backbones', 'downstream'])``; the registries' ``locations`` name this
package): it imports each task package here, each registering its components and its record. A task package is a
sub-package with a ``record.py`` (as harness/tasks.py finds the records), so a new task adds no line here.
"""
import importlib
import os.path as osp
import pkgutil

for _package in pkgutil.iter_modules(__path__):  # sorted by name: the records' ``order`` fixes the board's
    if _package.ispkg and osp.isfile(osp.join(__path__[0], _package.name, 'record.py')):
        importlib.import_module(f'{__name__}.{_package.name}')
