"""CPython's private internals the suite relies on (written for CPython 3.11; see ``WRITTEN_FOR``): the
forkserver protocol of ``multiprocessing`` (the pipeline forks its stages from a preloaded server,
``harness/pipeline/preload.py``), the interpreter's exit, and the pure-Python pickler."""
import atexit
import os
import pickle
from multiprocessing import forkserver
from typing import List, Tuple


def forkserver_internals_present() -> bool:
    """Whether this Python has the internals the functions below use (another one falls back to subprocesses)."""
    server = getattr(forkserver, '_forkserver', None)
    return (all(hasattr(forkserver, name) for name in ('connect_to_new_process', 'read_signed', 'get_inherited_fds'))
            and hasattr(server, '_forkserver_alive_fd') and hasattr(atexit, '_run_exitfuncs'))


def start_forkserver() -> None:
    """Start the forkserver now, if it is not running; returns at once, the server imports its preload modules
    meanwhile. ``forkserver.ensure_running``, undocumented: multiprocessing starts it with the first ``Process``."""
    forkserver.ensure_running()


def fork_from_server(fds: List[int]) -> Tuple[int, int]:
    """Ask the running forkserver for a child that inherits ``fds``: ``(status, data)``, the child's pid and then
    its exit status arrive on ``status`` (:func:`read_signed`); the child reads what to run from ``data``
    (:func:`send_to_child`).

    ``forkserver.connect_to_new_process``, undocumented: multiprocessing's only public use of the server is a
    ``Process``, whose child runs a Python function, not a script with its own process group and output pipe."""
    return forkserver.connect_to_new_process(fds)


def send_to_child(data: int, child: 'ForkserverChild') -> None:
    """Send ``child`` down ``data``: the forked process unpickles it and exits with what its ``run`` returns.

    The protocol of ``multiprocessing.spawn._main``, which the forkserver's child runs: first the preparation
    data (here none: preparing would run the parent's ``__main__`` again in the child), then the object."""
    with open(data, 'wb', closefd=False) as f:
        pickle.dump({}, f)
        pickle.dump(child, f)


def read_signed(fd: int) -> int:
    """The next integer the forkserver sends on a child's ``status`` pipe (its pid, then its exit status); raises
    EOFError when the server died. ``forkserver.read_signed``, undocumented."""
    return forkserver.read_signed(fd)


class ForkserverChild:
    """What :func:`send_to_child` sends: subclasses implement ``run(parent_sentinel) -> exit status``.

    ``_bootstrap(parent_sentinel)`` is the method ``multiprocessing.spawn._main`` calls on the object it unpickled
    (a ``Process``'s, private); ``parent_sentinel`` reaches end of file when the parent dies."""

    def _bootstrap(self, parent_sentinel: int) -> int:
        return self.run(parent_sentinel)

    def run(self, parent_sentinel: int) -> int:
        raise NotImplementedError


def inherited_fds() -> List[int]:
    """In a forked child, the descriptors its parent passed to :func:`fork_from_server`.
    ``forkserver.get_inherited_fds``, undocumented."""
    return forkserver.get_inherited_fds()


def release_forkserver_alive_fd() -> None:
    """In a forked child, close the server's 'alive' pipe, which the server hands every child: a child that holds it
    keeps the server (and the pipeline's wait for it) from seeing its parent end.

    ``forkserver._forkserver._forkserver_alive_fd``, private: no public call lets a child go of it."""
    os.close(forkserver._forkserver._forkserver_alive_fd)
    forkserver._forkserver._forkserver_alive_fd = None


def run_exit_functions() -> None:
    """Run the ``atexit`` functions now, as the interpreter does when ``python SCRIPT`` ends: a forked child ends
    with ``os._exit``, which runs none. ``atexit._run_exitfuncs``, private (CPython's own test helper)."""
    atexit._run_exitfuncs()


class PurePythonPickler(pickle._Pickler):
    """The pure-Python ``Pickler``, whose ``dispatch`` table a subclass can copy and change (the C one has none):
    ``pickle._Pickler``, private."""
