"""vitbench's shared infrastructure: the registries and the checkpoint I/O policy every task relies on."""
from . import checkpoint as _checkpoint

_checkpoint.install()
