"""What a stage asks of a cluster: the ``slurm`` defaults of a pipeline config and each stage's ``resources``.

::

    executor = 'slurm'                          # or 'local' (the default); --executor replaces it
    slurm = dict(partition='gpu', account='vision', gpus_per_node=8, time='1-00:00:00', mem='480G')
    stages = [
        dict(name='pretrain', config=..., resources=dict(nodes=4, gpus_per_node=8, time='3-00:00:00')),
        dict(name='leaderboard', kind='leaderboard', ..., resources=dict(gpus_per_node=0, time=30)),
    ]

A stage's ``resources`` replace the pipeline's ``slurm`` defaults key by key; ``tools/pipeline.py --partition
--nodes --gpus-per-node --time --mem`` replace the defaults. Keys: ``nodes`` (>= 1), ``gpus_per_node`` (>= 0; a
train / test stage runs one task per GPU, one task on a CPU-only allocation), ``cpus_per_task`` (>= 1), ``mem``
(per node, as sbatch takes it: ``'64G'``, ``'500M'``, ``0`` for all of it), ``time`` (minutes, or ``'MM:SS'``,
``'HH:MM:SS'``, ``'D-HH'``, ``'D-HH:MM'``, ``'D-HH:MM:SS'``), ``partition``; the defaults may also name the
``account``, ``qos`` and ``constraint``. Only the Slurm executor uses them.
"""
import re
from typing import Optional

EXECUTORS = ('local', 'slurm')
RESOURCE_KEYS = ('nodes', 'gpus_per_node', 'cpus_per_task', 'mem', 'time', 'partition')
SLURM_KEYS = RESOURCE_KEYS + ('account', 'qos', 'constraint')
DEFAULTS = dict(nodes=1, gpus_per_node=0, cpus_per_task=None, mem=None, time=60)  # time in minutes

_MEM = re.compile(r'^\d+[KMGT]?$')
_TIME = re.compile(r'^(?:(?P<d>\d+)-)?(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?$')


class ResourceError(ValueError):
    """A value sbatch would not take; the message names where it came from and what was expected."""


def time_minutes(value, where: str = 'time') -> int:
    """A Slurm time limit as whole minutes (seconds round up): 90, '90', '1:30:00', '2-00:00:00' ..."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _TIME.match(value.strip()) if isinstance(value, str) else None
    if match:
        days, parts = int(match['d'] or 0), [int(p) for p in (match['a'], match['b'], match['c']) if p is not None]
        if match['d']:  # D-HH, D-HH:MM, D-HH:MM:SS
            hours, minutes, seconds = (parts + [0, 0])[:3]
        elif len(parts) == 3:  # HH:MM:SS
            hours, minutes, seconds = parts
        else:  # MM, MM:SS
            hours, (minutes, seconds) = 0, (parts + [0])[:2]
        total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
        if total > 0:
            return -(-total // 60)
    raise ResourceError(f"{where} is {value!r}, expected a time limit: minutes (e.g. 90), or 'HH:MM:SS', "
                        "'D-HH:MM:SS' as sbatch --time takes it (e.g. '3-00:00:00')")


def check_resources(where: str, value, keys=RESOURCE_KEYS) -> dict:
    """``value`` (a dict, or None for none) checked key by key; ``time`` becomes minutes."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ResourceError(f'{where} is {value!r}, expected a dict such as dict(nodes=1, gpus_per_node=8, '
                            "time='24:00:00', mem='64G')")
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise ResourceError(f'{where}: unknown key(s) {unknown}; expected some of {keys}')
    return {key: check_value(f"{where}[{key!r}]", key, item) for key, item in value.items() if item is not None}


def check_value(at: str, key: str, item):
    """One resource value checked (``at`` names it in the message); ``time`` becomes minutes."""
    if key in ('nodes', 'cpus_per_task', 'gpus_per_node'):
        least = 0 if key == 'gpus_per_node' else 1
        if not (isinstance(item, int) and not isinstance(item, bool) and item >= least):
            raise ResourceError(f'{at} is {item!r}, expected a whole number >= {least}')
    elif key == 'mem':
        if isinstance(item, bool) or not _MEM.match(str(item)):
            raise ResourceError(f"{at} is {item!r}, expected memory per node as sbatch --mem takes it: a "
                                "number with K, M, G or T (e.g. '64G'), or 0 for all of the node's")
        item = str(item)
    elif key == 'time':
        item = time_minutes(item, at)
    elif not (isinstance(item, str) and item and not item.isspace()):
        raise ResourceError(f'{at} is {item!r}, expected a name')
    return item


def check_executor(where: str, value) -> str:
    if value not in EXECUTORS:
        raise ResourceError(f'{where} is {value!r}, expected one of {EXECUTORS}')
    return value


def stage_resources(defaults: dict, own: Optional[dict]) -> dict:
    """The resources a stage runs with: :data:`DEFAULTS`, the pipeline's, then the stage's own."""
    return {**DEFAULTS, **(defaults or {}), **(own or {})}


def format_minutes(minutes: int) -> str:
    days, rest = divmod(minutes, 24 * 60)
    return (f'{days}-' if days else '') + f'{rest // 60:02d}:{rest % 60:02d}:00'
