"""A stage's process: started in a process group of its own that dies with the pipeline (or forked from the
preload server, :mod:`harness.pipeline.preload`), and stopped with its launcher, ranks and dataloader workers."""
import os
import signal
import subprocess
import sys
import time
from typing import Dict, List

from . import preload

STOP_GRACE_S = 10.0  # from SIGTERM to SIGKILL when stages are stopped

# Runs a stage's argv in place of itself (exec), after asking Linux to send it SIGTERM when the pipeline dies
# (PR_SET_PDEATHSIG survives exec). Not a preexec_fn: those are unsafe in a process with threads, and stages start
# from a thread pool. SIGTERM rather than SIGKILL, so that a launcher (torchrun) stops its own workers. The signal
# comes when the thread that started the stage ends: the pool's threads live until every stage has ended.
_DIE_WITH_PIPELINE = """\
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
except (AttributeError, OSError):
    pass  # not Linux: the stage outlives a pipeline killed with -9; an interrupted pipeline still stops it
if os.getppid() != int(sys.argv[1]):
    sys.exit('the pipeline ended before this stage started')
os.execvp(sys.argv[2], sys.argv[2:])
"""


def start_stage(argv: List[str], env: Dict[str, str], fork: bool = False):
    """The running stage, its output (stdout and stderr) on ``.stdout``: forked from the preload server with
    ``fork``, else a fresh subprocess."""
    if fork:
        return preload.ForkedStage(argv, env)
    return subprocess.Popen([sys.executable, '-c', _DIE_WITH_PIPELINE, str(os.getpid()), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors='replace', bufsize=1, env=env, process_group=0)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)  # the stage's own group: its launcher, ranks and dataloader workers
    except (ProcessLookupError, PermissionError):
        pass  # the whole group is gone


def stop_stages(processes, grace: float = STOP_GRACE_S) -> None:
    """SIGTERM to every stage's process group; SIGKILL to what is left of it after ``grace`` seconds, or as soon
    as its leader is gone (workers of a trainer that died would otherwise linger until they notice)."""
    for process in processes:
        _signal_group(process, signal.SIGTERM)
    deadline = time.time() + grace
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            pass
        _signal_group(process, signal.SIGKILL)
