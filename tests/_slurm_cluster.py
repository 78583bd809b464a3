"""A real one-node Slurm cluster for the tests: munged, slurmctld and slurmd on this machine (Debian's
``slurm-wlm`` and ``munge`` packages), all of their state in a temporary folder, stopped at the end.

The node is this machine as ``slurmd -C`` describes it (its cores and memory); the controller listens on
127.0.0.1 on free ports; munge runs on its own socket with a fresh key. The daemons run as the current user
(root in CI); ``SLURM_CONF`` points the client commands (sbatch, squeue, scontrol) at the cluster.
"""
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Dict, List, Optional

DAEMONS = ('munged', 'slurmctld', 'slurmd', 'sbatch')


def missing_commands() -> List[str]:
    """The commands a cluster needs that this machine lacks (empty: it can run one)."""
    return [name for name in DAEMONS if shutil.which(name) is None and not Path('/usr/sbin', name).exists()]


def _free_ports(n: int) -> List[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(('127.0.0.1', 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _command(name: str) -> str:
    return shutil.which(name) or str(Path('/usr/sbin', name))


class SlurmCluster:
    """``with SlurmCluster(folder) as cluster:`` a running cluster; ``cluster.env``: the environment of its
    clients; ``cluster.run('squeue')``."""

    def __init__(self, folder: Path, max_job_age_s: int = 3600):
        self.folder = Path(folder)
        self.node = socket.gethostname().split('.')[0]  # the machine's name, as a real node's
        self.max_job_age_s = max_job_age_s
        self.processes: Dict[str, subprocess.Popen] = {}
        self.env: Dict[str, str] = {}

    # ------------------------------------------------------------------------------------------ setup

    def _write_config(self) -> Path:
        node = subprocess.run([_command('slurmd'), '-C'], capture_output=True, text=True, check=True).stdout
        fields = dict(item.split('=', 1) for item in node.split() if '=' in item)
        keep = ('CPUs', 'Boards', 'SocketsPerBoard', 'CoresPerSocket', 'ThreadsPerCore', 'RealMemory')
        hardware = ' '.join(f'{k}={fields[k]}' for k in keep if k in fields)
        ctld_port, slurmd_port = _free_ports(2)
        user = self.user = subprocess.run(['id', '-un'], capture_output=True, text=True, check=True).stdout.strip()
        state = self.folder
        for sub in ('state', 'spool', 'log', 'run'):
            (state / sub).mkdir(parents=True, exist_ok=True)
        config = state / 'slurm.conf'
        config.write_text('\n'.join([
            'ClusterName=vitbench-test',
            f'SlurmctldHost={socket.gethostname().split(".")[0]}(127.0.0.1)',
            f'SlurmctldPort={ctld_port}',
            f'SlurmdPort={slurmd_port}',
            f'SlurmUser={user}',
            f'SlurmdUser={user}',
            'AuthType=auth/munge',
            # cred_expire: how long a job's credentials stay revoked, i.e. how long a requeued job waits before it
            # may start again (120 s by default; started earlier, slurmd refuses it and the job is lost)
            f'AuthInfo=socket={state / "run" / "munge.socket"},cred_expire=10',
            'CredType=cred/munge',
            f'StateSaveLocation={state / "state"}',
            f'SlurmdSpoolDir={state / "spool" / "%n"}',
            f'SlurmctldPidFile={state / "run" / "slurmctld.pid"}',
            f'SlurmdPidFile={state / "run" / "slurmd.pid"}',
            f'SlurmctldLogFile={state / "log" / "slurmctld.log"}',
            f'SlurmdLogFile={state / "log" / "slurmd.log"}',
            'ProctrackType=proctrack/linuxproc',
            'TaskPlugin=task/none',
            'JobAcctGatherType=jobacct_gather/none',
            'AccountingStorageType=accounting_storage/none',
            'SelectType=select/cons_tres',
            'SelectTypeParameters=CR_Core',
            'SchedulerType=sched/backfill',
            'ReturnToService=2',
            f'MinJobAge={self.max_job_age_s}',
            'KillWait=5',
            'MpiDefault=none',
            'SlurmctldDebug=info',
            'SlurmdDebug=info',
            f'NodeName={self.node} NodeAddr=127.0.0.1 '
            f'{hardware} State=UNKNOWN',
            f'PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP',
            '']))
        return config

    def start(self, timeout: float = 60.0) -> 'SlurmCluster':
        config = self._write_config()
        run = self.folder / 'run'
        key = run / 'munge.key'
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.env = dict(os.environ, SLURM_CONF=str(config))
        self._spawn('munged', [_command('munged'), '--foreground', '--force', f'--socket={run / "munge.socket"}',
                               f'--key-file={key}', f'--pid-file={run / "munged.pid"}',
                               f'--log-file={self.folder / "log" / "munged.log"}',
                               f'--seed-file={run / "munged.seed"}'])
        self._wait(lambda: (run / 'munge.socket').exists(), timeout, 'munged to open its socket')
        self._spawn('slurmctld', [_command('slurmctld'), '-D', '-i', '-f', str(config)])
        self._spawn('slurmd', [_command('slurmd'), '-D', '-N', self.node, '-f', str(config)])
        self._wait(self._idle, timeout, f'node {self.node} to be idle')
        return self

    def _spawn(self, name: str, argv: List[str]) -> None:
        log = open(self.folder / 'log' / f'{name}.out', 'w')
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                                start_new_session=True)
        log.close()

    def _idle(self) -> bool:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise RuntimeError(f'{name} exited with status {process.returncode}: {self.log_tail(name)}')
        shown = self.run('sinfo', '-h', '-N', '-o', '%T', check=False)
        return shown.returncode == 0 and shown.stdout.strip() == 'idle'

    @staticmethod
    def _wait(condition, timeout: float, what: str) -> None:
        deadline = time.time() + timeout
        while not condition():
            if time.time() > deadline:
                raise TimeoutError(f'timed out waiting for {what}')
            time.sleep(0.2)

    def log_tail(self, name: str, lines: int = 20) -> str:
        text = ''
        for path in (self.folder / 'log' / f'{name}.log', self.folder / 'log' / f'{name}.out'):
            if path.exists():
                text += path.read_text(errors='replace')
        return '\n'.join(text.splitlines()[-lines:])

    # ------------------------------------------------------------------------------------------ use

    def run(self, *argv: str, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess:
        done = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and done.returncode != 0:
            raise RuntimeError(f'{" ".join(argv)}: exit status {done.returncode}: {done.stderr.strip()}')
        return done

    def job(self, job_id: str) -> Dict[str, str]:
        shown = self.run('scontrol', 'show', 'job', '-o', str(job_id))
        return dict(item.split('=', 1) for item in shown.stdout.split() if '=' in item)

    def stop(self) -> None:
        """Cancel every job, stop the daemons, and kill whatever of this cluster is still alive: slurmd leaves the
        job steps it started (slurmstepd and the tasks) running when it stops, by design."""
        if 'slurmctld' in self.processes and self.processes['slurmctld'].poll() is None:
            self.run('scancel', '--full', '-u', self.user, check=False)
            deadline = time.time() + 20
            while time.time() < deadline and self.run('squeue', '-h', check=False).stdout.strip():
                time.sleep(0.5)
        for name in ('slurmd', 'slurmctld', 'munged'):  # the node first
            process = self.processes.pop(name, None)
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pid in self.leftovers():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass

    def leftovers(self) -> List[int]:
        """Live processes of this cluster: those whose environment names its slurm.conf (slurmd passed it to
        the job steps it started, sbatch to the jobs)."""
        marker = f'SLURM_CONF={self.folder / "slurm.conf"}'.encode()
        pids = []
        for entry in Path('/proc').iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if marker in (entry / 'environ').read_bytes().split(b'\0'):
                    pids.append(int(entry.name))
            except OSError:
                continue  # gone, or not ours to read
        return pids

    def __enter__(self) -> 'SlurmCluster':
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def skip_reason() -> Optional[str]:
    """Why no cluster can run here (None: one can)."""
    missing = missing_commands()
    if missing:
        return (f'no Slurm on this machine ({", ".join(missing)} not found): apt-get install slurmctld slurmd '
                'slurm-client munge')
    if os.geteuid() != 0:
        return 'a one-node Slurm needs root here (slurmd starts each job as its user)'
    return None
