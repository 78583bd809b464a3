"""Reading a ``result.json`` for the leaderboard: finding the files under run folders, and checking each record
against the schema (docs/architecture.md), every error naming the file and the key."""
import json
import math
import numbers
import os
import os.path as osp
from typing import List, Sequence

from .experiment import UNITS
from .schema import DIVERGED, task_names, task_of

_COST_NUMBERS = ('wall_s', 'device_hours', 'peak_mem_MB', 'images_per_s', 'pretrain_device_hours',
                 'total_device_hours')  # the numbers of result.json's ``cost`` the leaderboard reads


class LeaderboardError(ValueError):
    """A result.json (or paper data file) that cannot be read; the message names the file and the key."""


# folders where experiment trackers copy a run's files (MLflow's artifacts under WORK_DIR/<time>/vis_data): a
# result.json there is a copy of its run's, not a run
TRACKER_FOLDERS = ('vis_data',)


def find_results(paths: Sequence[str]) -> List[str]:
    """Every ``result.json`` under the given folders (a .json file counts as itself), sorted, no repeats; the copies
    trackers keep (:data:`TRACKER_FOLDERS`) are not runs and are skipped."""
    found = []
    for path in paths:
        if osp.isfile(path):
            found.append(path)
        elif osp.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in TRACKER_FOLDERS)
                if 'result.json' in files:
                    found.append(osp.join(root, 'result.json'))
        else:
            raise LeaderboardError(f"run folder '{path}' does not exist (expected a folder holding result.json "
                                   'files, e.g. work_dirs/demo, or a result.json file)')
    seen, unique = set(), []
    for path in found:
        real = osp.realpath(path)
        if real not in seen:
            seen.add(real)
            unique.append(path)
    return unique


def config_name(path) -> str:
    """A run's config as the paper rows name it: from its last ``configs`` folder on
    ('<repo>/configs/<folder>/<name>.py' -> 'configs/<folder>/<name>.py'), else the normalised path."""
    if not isinstance(path, str) or not path:
        return ''
    parts = osp.normpath(path).replace(osp.sep, '/').split('/')
    if 'configs' in parts:
        parts = parts[len(parts) - 1 - parts[::-1].index('configs'):]
    return '/'.join(parts)


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _integer(value) -> bool:
    return _number(value) and float(value).is_integer()


def _img_size(value) -> bool:
    return (_integer(value) and value > 0) or (
        isinstance(value, list) and len(value) == 2 and all(_integer(v) and v > 0 for v in value))


def _count(value) -> bool:
    return _integer(value) and value >= 0


def _percent_metrics(task: str) -> set:
    """The headline metrics of ``task`` that are percentages (result.json stores COCO's AP as percent too)."""
    return {m.name for m in task_of(task).metrics if m.percent}


def _object(value) -> bool:
    return isinstance(value, dict)


def _optional(path: str, key: str, value, valid, what: str) -> None:
    """Raise unless ``value`` is None or ``valid(value)``; the message names the file and the key."""
    if value is not None and not valid(value):
        raise LeaderboardError(f"{path}: key '{key}' is {value!r}, expected {what}")


def read_result(path: str) -> dict:
    """Load and check one result.json; errors name the file and the key."""
    try:
        with open(path, encoding='utf-8') as f:
            record = json.load(f)
    except OSError as e:
        raise LeaderboardError(f'{path}: cannot be read: {e.strerror or e}') from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LeaderboardError(f'{path}: not valid JSON: {e}') from e
    except RecursionError:  # a hostile or broken file: json nests one Python frame per level
        raise LeaderboardError(f'{path}: nested too deeply to be a result.json') from None
    if not isinstance(record, dict):
        raise LeaderboardError(f'{path}: expected a JSON object with the result.json keys, got {type(record).__name__}')

    def need(key, kind, what, parent=record, prefix=''):
        if key not in parent:
            raise LeaderboardError(f"{path}: missing key '{prefix}{key}' ({what})")
        if not isinstance(parent[key], kind):
            raise LeaderboardError(f"{path}: key '{prefix}{key}' is {parent[key]!r}, expected {what}")
        return parent[key]

    task = need('task', str, f'one of {task_names()}')
    if task_of(task) is None:
        raise LeaderboardError(f"{path}: key 'task' is {task!r}, expected one of {task_names()} (a task of your "
                               'own: name the module that registers it, --imports MODULE)')
    need('dataset', str, 'the dataset name, e.g. "ade20k"')
    need('backbone', str, 'a named backbone variant')
    pretrain = need('pretrain', dict, 'an object {"recipe": str, "epochs": int|null, "checkpoint": ...}')
    need('recipe', str, 'the pre-training recipe name, e.g. "mae"', pretrain, 'pretrain.')
    _optional(path, 'pretrain.epochs', pretrain.get('epochs'), _count, 'a whole number >= 0 or null')
    _optional(path, 'pretrain.finetune', pretrain.get('finetune'), _object, 'an object or null')
    _optional(path, 'pretrain.keep_blocks', pretrain.get('keep_blocks'), _integer, 'an integer or null')
    _optional(path, 'pretrain.data', pretrain.get('data'), lambda v: isinstance(v, str),
              'a dataset name (e.g. "imagenet21k") or null')
    _optional(path, 'pretrain.model', pretrain.get('model'), _object, 'an object of backbone overrides or null')
    _optional(path, 'pretrain.tokenizer', pretrain.get('tokenizer'), lambda v: isinstance(v, str),
              'the visual tokenizer of a masked-token pre-training (e.g. "kmeans-8192", "dall-e-8192") or null')
    if record.get('status') not in (None, DIVERGED):
        raise LeaderboardError(f"{path}: key 'status' is {record['status']!r}, expected null or {DIVERGED!r} (a "
                               'training stopped because its loss stopped being finite)')
    metrics = need('metrics', dict, 'an object {metric name: number}')
    percent = _percent_metrics(task)  # once per record read, not per metric
    for name, value in metrics.items():
        if not _number(value):
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a number")
        if not math.isfinite(value):  # JSON's NaN / Infinity: a diverged or broken run, not a score to rank
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a finite number (did the "
                                   'run diverge? rerun it, or delete this result.json)')
        if name in percent and not 0 <= value <= 100:
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a percentage in [0, 100]")
        if name == 'skipped_images' and not _count(value):
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a whole number >= 0")
    for key in ('params_M', 'gflops'):
        if record.get(key) is not None and not (_number(record[key]) and math.isfinite(record[key])
                                                and record[key] >= 0):
            raise LeaderboardError(f"{path}: key '{key}' is {record[key]!r}, expected a number >= 0 or null")
    for key in ('eval', 'created'):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise LeaderboardError(f"{path}: key '{key}' is {record[key]!r}, expected a string")
    _optional(path, 'seed', record.get('seed'), _integer, 'an integer or null')
    cost = record.get('cost')
    _optional(path, 'cost', cost, _object, 'an object or null')
    for key in _COST_NUMBERS:
        value = (cost or {}).get(key)
        if value is not None and not _number(value):
            raise LeaderboardError(f"{path}: key 'cost.{key}' is {value!r}, expected a number or null")
    for key in ('img_size', 'variant_img_size'):
        _optional(path, key, record.get(key), _img_size, 'a size in pixels (an integer or [height, width]) or null')
    protocol = record.get('protocol')
    if protocol is not None and not (isinstance(protocol, dict) and isinstance(protocol.get('name'), str)
                                     and isinstance(protocol.get('digest'), str)):
        raise LeaderboardError(f"{path}: key 'protocol' is {protocol!r}, expected null or an object "
                               '{"name": str, "digest": str}')
    _optional(path, 'options', record.get('options'),
              lambda v: isinstance(v, dict) and all(isinstance(k, str) for k in v),
              'null or an object {"dotted.key": value} (the --cfg-options that changed the experiment)')
    schedule = record.get('schedule')
    _optional(path, 'schedule', schedule, lambda v: isinstance(v, dict) and v.get('unit') in UNITS and all(
        _count(v.get(k)) for k in ('run', 'configured')),
        f'null or an object {{"unit": one of {UNITS}, "run": int, "configured": int}} (the schedule as run)')
    _optional(path, 'eval_set', record.get('eval_set'), lambda v: isinstance(v, dict) and _count(v.get('images'))
              and isinstance(v.get('ids_sha256'), str) and v['ids_sha256'],
              'null or an object {"images": int, "ids_sha256": str} (which images the run was evaluated on)')
    _optional(path, 'per_image', record.get('per_image'),
              lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
              "a list of metric names (those with evidence in per_image.npz beside it)")
    if record.get('backbone_overrides') is not None and not isinstance(record['backbone_overrides'], dict):
        raise LeaderboardError(f"{path}: key 'backbone_overrides' is {record['backbone_overrides']!r}, "
                               'expected an object')
    return record


