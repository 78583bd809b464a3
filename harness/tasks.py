"""The tasks a reader of results knows: the suite's own, and those of the modules a user names (``--imports``).

Each task's package declares its record (``register(Task(...))``, vitbench/results/schema.py) in a torch-free module
of its own and registers it when it is imported. A training imports its task's package anyway (its config's
``custom_imports``); a reader of results imports none: tools/leaderboard.py and tools/pipeline.py (its stages'
summaries, its leaderboard stages) call :func:`load_tasks` first.

The suite's records are the ``record.py`` of its task layers' packages (``pretrain/record.py``,
``downstream/<task>/record.py``), read from their files without running the packages' ``__init__``: those import
torch, mmseg and mmdet (~5 s), which a leaderboard (~1 s) never uses. A record module therefore imports only
``vitbench.results.schema``; when its package is imported later in the same process, its ``register`` runs again
with the same record, which changes nothing. A module of the user's is imported as it is, package and all.
"""
import importlib
import importlib.util
import os
import os.path as osp
import sys
from glob import glob
from typing import Iterable, List, Tuple

LAYERS = ('pretrain', 'downstream')  # the suite's packages of tasks (docs/architecture.md's layers 5 and 6)
RECORD = 'record.py'
_loaded = set()  # the record files this process has run


class ImportsError(ValueError):
    """A module named to be imported (``--imports``, a pipeline's ``imports``) that cannot be; the message is one
    line naming the option and the module."""


def suite_records() -> List[Tuple[str, str]]:
    """(module name, file) of each task record of the suite: the ``record.py`` of a task layer's package or of a
    package in it, sorted by name (the records say their own order)."""
    found = []
    for layer in LAYERS:
        spec = importlib.util.find_spec(layer)  # a top-level name: located, not imported
        for folder in spec.submodule_search_locations:
            for path in [osp.join(folder, RECORD), *glob(osp.join(folder, '*', RECORD))]:
                if osp.isfile(path) and osp.isfile(osp.join(osp.dirname(path), '__init__.py')):
                    package = osp.relpath(osp.dirname(path), folder).replace(os.sep, '.')
                    found.append(('.'.join(filter(None, (layer, package.strip('.'), 'record'))), path))
    return sorted(found)


def load_suite_records() -> None:
    """Register the suite's task records without importing their packages (see the module's docstring)."""
    for name, path in suite_records():
        if name in sys.modules or path in _loaded:  # imported with its package, or run here before: registered
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        _loaded.add(path)


def import_modules(modules: Iterable[str], option: str = '--imports') -> None:
    """Import each of ``modules`` (a task or backbone family from outside the suite registers itself so); any
    failure is an :class:`ImportsError` naming ``option`` and the module."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as e:  # not found, a broken module, a record that register() refuses: one line each
            raise ImportsError(f'{option} {name}: {type(e).__name__}: {e} (expected a module on PYTHONPATH, e.g. '
                               'the package of a task of your own)') from None


def load_tasks(imports: Iterable[str] = (), option: str = '--imports') -> None:
    """What a reader of results calls before it reads: the suite's records, then ``imports``."""
    load_suite_records()
    import_modules(imports, option)
