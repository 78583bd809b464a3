"""Frozen-feature evaluation of any backbone: k-NN classification, category-level retrieval and a linear probe on
features computed once and cached (docs/downstream.md). Importing the package registers its record and its
components."""
from . import record  # noqa: F401
from .loop import FrozenFeatureLoop
from .metric import FrozenFeatureMetric
from .model import FrozenFeatureModel

__all__ = ['FrozenFeatureLoop', 'FrozenFeatureMetric', 'FrozenFeatureModel']
