"""Checkpoint formats: reading (official DeiT / DeiT III / CaiT / MAE / MAE-lite, timm, mmengine, vitbench),
loading into a model with strict checks, and writing the suite's own backbone format."""
from .formats import Canonical, to_canonical
from .io import FORMAT_TAG, CheckpointError, read_checkpoint, save_checkpoint
from .loader import LoadReport, init_from_cfg, load_checkpoint

__all__ = ['Canonical', 'to_canonical', 'FORMAT_TAG', 'CheckpointError', 'read_checkpoint', 'save_checkpoint',
           'LoadReport', 'init_from_cfg', 'load_checkpoint']
