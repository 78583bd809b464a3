"""mmengine Runner checkpoints that load under ``torch.load(weights_only=True)``, the default of torch >= 2.6.

``weights_only`` rejects what mmengine 0.10.7 pickles into every Runner checkpoint: numpy scalars and arrays in
the message hub, and ``HistoryBuffer`` objects whose default pickle goes through ``getattr`` (allowing that would
make the safe unpickler unsafe). Rather than switch ``weights_only`` off (which would also trust any third-party
file), :func:`install_safe_loading`

* allow-lists the numpy data types and ``HistoryBuffer`` (plain data classes), and
* makes ``HistoryBuffer`` pickle through its constructor (``vitbench/compat/mmengine.py``), so that checkpoints
  written from then on contain no ``getattr`` and load under ``weights_only=True``.
"""
import numpy as np
import torch
from mmengine.logging import HistoryBuffer

from vitbench.compat.mmengine import pickle_history_buffers_by_constructor


def _numpy_safe_globals():
    # what numpy's own pickles call: the array and scalar rebuilders, named by numpy's public reduce protocol
    reconstruct, scalar = np.zeros(0).__reduce__()[0], np.float64(0).__reduce__()[0]
    dtype_classes = [type(np.dtype(t)) for t in np.sctypeDict.values()]
    return [np.dtype, np.ndarray, scalar, reconstruct, *set(dtype_classes)]


def install_safe_loading() -> None:
    """Apply it to this process (idempotent)."""
    torch.serialization.add_safe_globals([*_numpy_safe_globals(), HistoryBuffer])
    pickle_history_buffers_by_constructor()
