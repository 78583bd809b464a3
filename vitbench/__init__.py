"""vitbench's shared core, one concern per sub-package, below every model and task (docs/architecture.md
draws the layers): ``fileio`` (the one atomic writer), ``compat`` (every reach into upstream internals),
``results`` (result.json vocabulary, leaderboard), ``registry`` (the ``vitbench`` registries) and ``engine``
(checkpoint policy, CPU AMP, layer decay). It imports no model, recipe or task; what drives whole runs
(one experiment, the pipeline, the demo data) is the ``harness`` package, above the tasks.

``__version__`` is the installed distribution's version (its metadata); imported from a checkout that is not
installed (PYTHONPATH), the checkout's ``pyproject.toml`` says it.
"""
import os.path as _osp
import re as _re
from importlib import metadata as _metadata


def _version() -> str:
    try:
        return _metadata.version('vitbench')
    except _metadata.PackageNotFoundError:  # a source checkout on PYTHONPATH, never installed
        pyproject = _osp.join(_osp.dirname(_osp.dirname(_osp.abspath(__file__))), 'pyproject.toml')
        try:
            with open(pyproject, encoding='utf-8') as f:
                found = _re.search(r'^version\s*=\s*"([^"]+)"', f.read(), _re.M)
        except OSError:
            found = None
        return found.group(1) if found else '0+unknown'


__version__ = _version()
