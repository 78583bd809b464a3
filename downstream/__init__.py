"""Glue that puts a vitbench backbone into other toolboxes.

Importing the package registers its pieces in the ``vitbench`` registries (configs reach them through
``custom_imports=dict(imports=['backbones', 'downstream'])``) and the task adapters of ``--backbone``.
"""
from . import seg  # noqa: F401
from . import det  # noqa: F401
from . import cls  # noqa: F401
