"""torch's private internals the suite relies on (written for torch 2.14; see ``WRITTEN_FOR``)."""
from torch import nn


def is_batch_norm(module: nn.Module) -> bool:
    """Whether ``module`` is a BatchNorm layer of any kind: 1d / 2d / 3d, lazy, synchronised, or a subclass
    (mmengine's ``_BatchNormXd``).

    Tests against ``torch.nn.modules.batchnorm._BatchNorm``, their private common base: torch has no public one
    (``_NormBase`` is private too and also covers InstanceNorm)."""
    return isinstance(module, nn.modules.batchnorm._BatchNorm)
