"""A server that has imported what tools/train.py and tools/test.py import (torch, mmengine, mmseg, mmdet, timm and
the suite: seconds of CPU per stage), from which the pipeline forks its local train / test stages
(multiprocessing's forkserver). A forked stage keeps what run.py gives a subprocess stage: a process group of its
own, SIGTERM on Linux when the pipeline is killed outright, its output and errors on one pipe that the pipeline
reads line by line, its exit status, the pipeline's environment (threads included) and working directory, and its
script run as ``__main__`` with its ``sys.argv``.

The server serves one thread setting (``THREAD_VARIABLES``): OpenMP and MKL read theirs once, when torch is
imported. It starts with the first pipeline's; a stage that wants another runs as a subprocess, as does every stage
under ``VITBENCH_NO_PRELOAD=1`` or where there is no forkserver.
"""
import ctypes
import importlib
import multiprocessing
import os
import os.path as osp
import runpy
import signal
import subprocess
import sys
import threading
import weakref
from multiprocessing import connection, forkserver
from typing import Dict, List, Optional

from vitbench.compat.python import (ForkserverChild, fork_from_server, forkserver_internals_present,
                                    inherited_fds, read_signed, release_forkserver_alive_fd,
                                    run_exit_functions, send_to_child, start_forkserver)

# What the tools import before they do anything, by name (only the server imports them): a forked stage starts
# where a fresh one stands after its imports, no further (a segmentation stage still imports mmseg.models itself).
MODULES = ['vitbench.engine.cpu_amp', 'harness.experiment.cli', __name__]
THREAD_VARIABLES = ('OMP_NUM_THREADS', 'MKL_NUM_THREADS')

_lock = threading.Lock()
_threads: Optional[Dict[str, Optional[str]]] = None  # the thread setting the server started with


def start(env: Dict[str, str]) -> bool:
    """Start the server (once a process) with ``env``'s thread setting; whether it serves stages run with ``env``.
    Call it before the threads that start stages: the server inherits ``os.environ``, set here for the moment."""
    global _threads
    if 'forkserver' not in multiprocessing.get_all_start_methods() or not forkserver_internals_present() or \
            env.get('VITBENCH_NO_PRELOAD', '') not in ('', '0'):
        return False
    threads = {name: env.get(name) for name in THREAD_VARIABLES}
    with _lock:
        if _threads is None:
            forkserver.set_forkserver_preload(MODULES)
            saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
            _set(os.environ, threads)
            try:
                start_forkserver()  # returns at once; the server imports MODULES meanwhile
            finally:
                _set(os.environ, saved)
            _threads = threads
    return _threads == threads


def _set(environ, values: Dict[str, Optional[str]]) -> None:
    for name, value in values.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


class ForkedStage:
    """``python SCRIPT ARGS`` (``argv``) forked from the server, used as run.py uses its subprocess.Popen: ``pid``
    (its process group's too), ``stdout`` (its output and errors, text, line by line) and ``wait``."""

    def __init__(self, argv: List[str], env: Dict[str, str]):
        self.args, self.returncode = argv, None
        self._lock = threading.Lock()
        reader, writer = os.pipe()
        try:
            # the server forks a child that reads what to run from `data`, then sends its pid and exit status on
            # `status`; `writer` becomes the child's (inherited_fds)
            status, data = fork_from_server([writer])
        finally:
            os.close(writer)
        weakref.finalize(self, os.close, status)
        try:
            send_to_child(data, _Stage(argv[1:], env, os.getcwd()))
            self.pid = read_signed(status)
            os.read(reader, 1)  # its own process group, death signal set (b'': it ended before; wait() says how)
        finally:
            os.close(data)  # after that byte: until then its end-of-file tells the child that the pipeline died
        self._status = status
        self.stdout = open(reader, errors='replace')

    def wait(self, timeout: Optional[float] = None) -> int:
        """Its exit status, minus the signal that ended it (as Popen.wait, TimeoutExpired included)."""
        if not connection.wait([self._status], timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        with self._lock:  # the server sends the status once: one thread reads it
            if self.returncode is None:
                try:
                    self.returncode = read_signed(self._status)
                except EOFError:
                    self.returncode = 255  # the server died (and with it the stage): its status is lost
        return self.returncode


class _Stage(ForkserverChild):
    """Unpickled in the forked child, which calls ``run`` and exits with what it returns."""

    def __init__(self, argv: List[str], env: Dict[str, str], cwd: str):
        self.argv, self.env, self.cwd = argv, env, cwd

    def run(self, pipeline_sentinel: int) -> int:
        os.setpgid(0, 0)  # a process group of its own, which stop_stages signals
        # Its parent is the server, which ends when the pipeline does: unless this stage holds the server's 'alive'
        # pipe, which the server hands every child.
        release_forkserver_alive_fd()
        try:
            ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (AttributeError, OSError):
            pass  # not Linux: the stage outlives a pipeline killed with -9; an interrupted pipeline still stops it
        if connection.wait([pipeline_sentinel], 0):  # end of file: the pipeline died before the signal was set
            return 1
        [out] = inherited_fds()
        os.write(out, b'\0')  # ready: ForkedStage reads this byte before the output
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(line_buffering=True)
        os.environ.clear()
        os.environ.update(self.env)
        import numpy
        import torch
        if self.env.get('OMP_NUM_THREADS', '').isdigit():  # torch read the server's at import
            torch.set_num_threads(int(self.env['OMP_NUM_THREADS']))
        numpy.random.seed()  # a fresh process seeds numpy from the OS; the forked ones would all share the server's
        os.chdir(self.cwd)
        script = self.argv[0]
        sys.argv = list(self.argv)
        # as `python SCRIPT` starts: its folder, its PYTHONPATH, then the server's path ('' first, for `-c`)
        sys.path[:] = [osp.dirname(osp.abspath(script)),
                       *filter(None, self.env.get('PYTHONPATH', '').split(os.pathsep)), *sys.path[1:]]
        importlib.invalidate_caches()  # the server's finders list folders as they were when it imported
        return _run_as_main(script)


def _run_as_main(script: str) -> int:
    """Run ``script`` and end as the interpreter ends ``python SCRIPT``; its exit status."""
    try:
        runpy.run_path(script, run_name='__main__')
        status = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            status = e.code or 0
        else:  # sys.exit('message')
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())  # the traceback
        status = 1
    for thread in threading.enumerate():  # the interpreter waits for them, then runs the exit functions
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    run_exit_functions()
    sys.stdout.flush()
    sys.stderr.flush()
    return status
