"""A toy downstream task from outside the suite, written as docs/extending-task.md says: monocular depth on a made-up
'toyroom' dataset. Its record (record.py), dataset (datasets.py), model (model.py) and metric (metrics.py);
importing the package registers them all, as a config's ``custom_imports=dict(imports=['toy_depth'])`` or a tool's
``--imports toy_depth`` do. tests/test_extending_task.py puts tests/toy_fixtures on PYTHONPATH and runs it through
tools/train.py, tools/pipeline.py and tools/leaderboard.py."""
from . import record  # noqa: F401  (registers the task's record)
from .datasets import ToyRoomDataset
from .metrics import ToyDepthMetric
from .model import ToyDepthModel

__all__ = ['ToyRoomDataset', 'ToyDepthMetric', 'ToyDepthModel']
