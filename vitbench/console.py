"""The command lines of an installed vitbench (``vitbench-train``, ``vitbench-pipeline``, ...) and the files they
read: the configs and tools shipped with the package (:func:`config_path`, :func:`tool_path`). Torch-free, standard
library only.

A wheel carries ``configs/``, ``tools/`` and ``requirements.lock`` in ``vitbench/.mim/`` (copied there when the wheel
is built: ``setup.py``), as mmpretrain ships its configs; in a checkout (an editable install, or PYTHONPATH) they are
the repository's own folders. Either way a config is named by its path under ``configs/``.

Why the console scripts run the tools' files rather than import them: the tools are scripts (``python
tools/train.py``, as the README, the pipeline, torchrun and srun start them), not a package the layers could place
(tests/test_architecture.py). Shipping the same files and running each with runpy as ``__main__`` keeps one copy of
every tool, and the same argv, exit status and error lines whichever way it is started.
"""
import os.path as osp
import runpy
import sys

_PACKAGE = osp.dirname(osp.abspath(__file__))
SHIPPED = osp.join(_PACKAGE, '.mim')  # in an installed wheel
CHECKOUT = osp.dirname(_PACKAGE)  # the repository, when vitbench runs from it
PACKAGE_PREFIX = 'vitbench::'  # mmengine's spelling of a package's config: vitbench::demo/sup_demo.py


def root() -> str:
    """The folder holding ``configs/``, ``tools/`` and ``requirements.lock``: the shipped copy, else the checkout."""
    return SHIPPED if osp.isdir(SHIPPED) else CHECKOUT


def configs_dir() -> str:
    return osp.join(root(), 'configs')


def config_path(name: str) -> str:
    """A config as a file: ``name`` itself when it is one (a path from the working directory), else the config of
    that name shipped with vitbench, named by its path under ``configs/`` (``demo/sup_demo.py``; ``configs/`` or
    ``vitbench::`` in front and the ``.py`` may be there or not). A name found nowhere comes back unchanged, for the
    caller to say that it is not found."""
    if osp.isfile(name):
        return name
    relative = name[len(PACKAGE_PREFIX):] if name.startswith(PACKAGE_PREFIX) else name
    if relative.startswith('configs/'):
        relative = relative[len('configs/'):]
    if osp.isabs(relative):
        return name
    for candidate in (relative, relative + '.py'):
        shipped = osp.join(configs_dir(), candidate)
        if osp.isfile(shipped):
            return shipped
    return name


def tool_path(name: str) -> str:
    """The script of a tool: ``train`` or ``train.py`` -> .../tools/train.py."""
    return osp.join(root(), 'tools', name if name.endswith('.py') else name + '.py')


def run_tool(name: str) -> None:
    """Run ``tools/<name>.py`` as ``python tools/<name>.py`` would, with this process's arguments."""
    path = tool_path(name)
    sys.argv[0] = path
    sys.path[0] = osp.dirname(path)  # the script's folder first, as the interpreter puts it
    runpy.run_path(path, run_name='__main__')  # its sys.exit(status) ends the console script with that status


# [project.scripts] in pyproject.toml: one function per command
def train():
    run_tool('train')


def test():
    run_tool('test')


def pipeline():
    run_tool('pipeline')


def leaderboard():
    run_tool('leaderboard')


def benchmark():
    run_tool('benchmark')


def list_backbones():
    run_tool('list_backbones')


def analyze():
    run_tool('analyze')


def convert_checkpoint():
    run_tool('convert_checkpoint')


def make_demo_data():
    run_tool('make_demo_data')


def env_check():
    run_tool('env_check')
