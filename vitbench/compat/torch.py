"""torch's private internals the suite relies on (written for torch 2.14; see ``WRITTEN_FOR``)."""
from torch import nn


def is_batch_norm(module: nn.Module) -> bool:
    """Whether ``module`` is a BatchNorm layer of any kind: 1d / 2d / 3d, lazy, synchronised, or a subclass
    (mmengine's ``_BatchNormXd``).

    Tests against ``torch.nn.modules.batchnorm._BatchNorm``, their private common base: torch has no public one
    (``_NormBase`` is private too and also covers InstanceNorm)."""
    return isinstance(module, nn.modules.batchnorm._BatchNorm)


class AppliesToDetached:
    """A module mixin: ``.to()``, ``.cuda()``, ``.half()``, ... also move the modules it holds outside its module tree
    (``detached_modules()``), such as a teacher that must follow the student's device and dtype yet stay out of its
    parameters, state dict and DistributedDataParallel wrapper.

    Overrides ``nn.Module._apply``, the private method all of those public ones go through: torch has no public hook
    that sees a device or dtype change."""

    def detached_modules(self):
        return ()

    def _apply(self, fn, *args, **kwargs):
        super()._apply(fn, *args, **kwargs)
        for module in self.detached_modules():
            module._apply(fn, *args, **kwargs)
        return self
