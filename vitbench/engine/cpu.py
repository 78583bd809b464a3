"""What CPU this is, as Linux reports it in /proc/cpuinfo: its model name (result.json's cost, the benchmark's
machine record) and its feature flags (whether bfloat16 autocast has instructions to run on)."""
import functools
import os
import platform
from typing import FrozenSet, Optional

CPUINFO = '/proc/cpuinfo'


def _field(key: str, cpuinfo: str = CPUINFO) -> Optional[str]:
    """The value of the first ``key : value`` line of ``cpuinfo``; None where there is no such file or line."""
    if not os.path.isfile(cpuinfo):
        return None
    with open(cpuinfo) as f:
        for line in f:
            if line.startswith(key):
                return line.split(':', 1)[1].strip()
    return None


@functools.lru_cache(maxsize=None)
def cpu_flags(cpuinfo: str = CPUINFO) -> FrozenSet[str]:
    """The CPU's feature flags as Linux reports them (empty where there is no /proc/cpuinfo)."""
    return frozenset((_field('flags', cpuinfo) or '').split())


def cpu_name() -> str:
    """'AMD EPYC ...'; off Linux, what the platform module knows."""
    return _field('model name') or platform.processor() or platform.machine() or 'cpu'
