"""Every use of an upstream package's private internals, or of upstream code copied into the suite, one module per
upstream: ``mmengine.py``, ``mmseg.py``, ``mmdet.py``, ``torch.py``, ``python.py`` (CPython's standard library).

Each function or class holds one reach and says, in its docstring, the upstream version it was written for, the
private thing it touches and why no public API does the job; the rest of the suite calls these and never touches
an upstream ``_name`` itself (``tests/test_compat.py`` greps for it). On an upgrade of a package in
``WRITTEN_FOR``, ``tests/test_compat.py`` fails naming the module here to re-check against the new version.

Importing this package or its modules imports no upstream package that the caller has not already paid for: mmseg
and mmdet are never imported here (the functions take their objects), mmengine and torch only by the modules
whose callers already import them.
"""

# The versions the modules were written for and checked against: the distribution, its version (a prefix of the
# installed one: '2.14' matches '2.14.1+cu130') and the module of this package to re-check when it changes.
WRITTEN_FOR = {
    'mmengine': ('0.10.7', 'vitbench/compat/mmengine.py'),
    'mmsegmentation': ('1.2.2', 'vitbench/compat/mmseg.py'),
    'mmdet': ('3.3.0', 'vitbench/compat/mmdet.py'),
    'torch': ('2.14', 'vitbench/compat/torch.py'),
    'python': ('3.11', 'vitbench/compat/python.py'),
}
