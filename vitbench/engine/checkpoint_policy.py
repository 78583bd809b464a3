"""Checkpoint I/O policy: mmengine checkpoints that load safely on torch >= 2.6
(``vitbench/engine/safe_checkpoint_load.py``), and atomic writes (``vitbench/engine/atomic_checkpoint_writes.py``).

Nothing happens on import: :func:`install_checkpoint_policy` applies both, called once by each entry point.
"""
from .atomic_checkpoint_writes import install_atomic_writes
from .safe_checkpoint_load import install_safe_loading


def install_checkpoint_policy() -> None:
    """Apply the policy to this process (idempotent). The entry points call it: ``build_runner`` of
    ``harness.experiment.cli`` (tools/train.py, tools/test.py, any script that builds a Runner through it) and
    the tools that read checkpoints; a script of your own that ``torch.load`` s runner checkpoints calls it too."""
    install_safe_loading()
    install_atomic_writes()
