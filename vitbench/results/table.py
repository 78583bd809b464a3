"""The leaderboard: every ``result.json`` under some folders, as one table of measured results.

A row is a (backbone, pre-training recipe, epochs) triple; a column is one downstream measurement:

* ``cls``      ImageNet (or any ``pretrain``/``finetune`` dataset) top-1; a fine-tuning run wins over the
               pre-training run's own top-1 for the same row, and is no conflict with it;
* ``seg``      mIoU per dataset and evaluation (``ss`` single-scale, ``ms`` multi-scale + flip);
* ``box``/``mask``  COCO box / mask AP;
* ``transfer`` top-1 per transfer dataset.

``experiment.eval`` other than ``ss`` (e.g. ``ms``, ``linear``) gives its own column, so a linear probe never
collides with full fine-tuning (an ImageNet fine-tune that trains part of the model records its mode, ``attention``,
``ffn`` or ``linear``, as its eval: ``vitbench.experiment.result_record.eval_of``). So does a fine-tuning run at another resolution than its variant's own (the papers'
"↑384": ``result.json`` ``img_size`` ≠ ``variant_img_size``): its cells go to "ImageNet top-1 ↑384", beside the
224 fine-tune's "ImageNet top-1" of the same row, never in conflict with it. Only fine-tuning runs are told apart
by resolution: a pre-training run's own top-1 is a by-product at its training resolution, which a fine-tune at the
variant's own resolution supersedes (records from before the two keys existed count as the variant's own).
Parameters and GFLOPs are the backbone's, as ``result.json`` records them (runs at another resolution than the
variant's own count only if no run of the row kept it).

Runs of one cell with different ``seed`` s are aggregated: the cell holds the mean over seeds with its
:class:`~vitbench.results.stats.Summary` (sample std, n, 95 % interval) and the value of each seed, so that rows
can be compared paired by seed (:mod:`vitbench.results.baseline`). A run that left per-image evidence beside its
result.json (``per_image``: :mod:`vitbench.results.per_image`) gives its cell an interval over the test images, a
percentile bootstrap (:mod:`vitbench.results.bootstrap`): the only interval a single run has (several seeds keep
their t-interval). Two runs of the same seed (or two without a
seed) that fill a cell with different values are a :class:`Conflict`: the newest is used and all are listed.
Cells no run fills stay empty (``None``), never zero. Each row also carries the price of its numbers from the
runs' ``cost``: device-hours of its pre-training, of each cell's task, in all, and the peak memory.
Rendering is in :mod:`vitbench.results.render`; the paper reference tables in :mod:`vitbench.results.paper`.
"""
import collections
import json
import math
import numbers
import os
import os.path as osp
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import bootstrap, per_image
from .schema import DIVERGED, HEADLINE_METRICS, KINDS, LOWER_IS_BETTER, METRIC_EVALS, TASKS, UNBOUNDED_METRICS
from .stats import Summary, summarize

# Display names and order of the datasets the suite knows; others keep their own name, after these.
DATASET_NAMES = {
    'imagenet': 'ImageNet', 'ade20k': 'ADE20k', 'coco': 'COCO', 'cifar10': 'CIFAR-10', 'cifar100': 'CIFAR-100',
    'flowers102': 'Flowers-102', 'cars': 'Cars', 'pets': 'Pets', 'aircraft': 'Aircraft', 'inat2018': 'iNat-18',
    'inat2019': 'iNat-19',
}
_EVAL_ORDER = ('ss', 'ms')
_RECIPE_ORDER = ('supervised', 'supervised_distilled', 'mae', 'dmae')  # then others by name, scratch last
_TOLERANCE = 1e-6  # values closer than this are the same measurement
_COST_NUMBERS = ('wall_s', 'device_hours', 'peak_mem_MB', 'images_per_s', 'pretrain_device_hours',
                 'total_device_hours')  # the numbers of result.json's ``cost`` the leaderboard reads
RowKey = Tuple[str, str, Optional[int]]  # backbone, recipe label, epochs
Seed = Optional[int]  # None: a run that recorded no seed


class LeaderboardError(ValueError):
    """A result.json (or paper data file) that cannot be read; the message names the file and the key."""


def dataset_label(name: str) -> str:
    base, sep, suffix = name.partition('-')
    return DATASET_NAMES.get(base, base) + sep + suffix


def _dataset_order(name: str):
    base = name.partition('-')[0]
    order = list(DATASET_NAMES)
    return (order.index(base) if base in order else len(order), name)


@dataclass(frozen=True)
class Column:
    kind: str  # one of KINDS
    dataset: str
    eval: str = 'ss'
    # a fine-tune at another resolution than the variant's own: that resolution ('384', or '384x320' when not
    # square), shown as "↑384"; '' for everything else
    res: str = ''

    @property
    def label(self) -> str:
        name = dataset_label(self.dataset)
        if self.kind == 'seg':
            return f'{name} mIoU {self.eval.upper()}' if self.eval in _EVAL_ORDER else f'{name} mIoU ({self.eval})'
        what = {'cls': 'top-1', 'transfer': 'top-1', 'box': 'box AP', 'mask': 'mask AP', 'mce': 'mCE',
                'ece': 'ECE'}[self.kind]
        return f'{name} {what}' + ('' if self.eval == 'ss' else f' ({self.eval})') + (f' ↑{self.res}' if self.res
                                                                                      else '')

    def at(self, res: str) -> 'Column':
        """This column at fine-tuning resolution ``res`` ('' : the variant's own)."""
        return Column(self.kind, self.dataset, self.eval, res)

    def sort_key(self):
        eval_rank = _EVAL_ORDER.index(self.eval) if self.eval in _EVAL_ORDER else len(_EVAL_ORDER)
        res_rank = tuple(int(n) for n in self.res.split('x')) if self.res else ()  # the variant's own first
        if self.kind in ('box', 'mask'):  # box and mask AP of one dataset side by side
            return (KINDS.index('box'), _dataset_order(self.dataset), res_rank, eval_rank, self.eval, self.kind)
        return (KINDS.index(self.kind), _dataset_order(self.dataset), res_rank, eval_rank, self.eval, '')


def sorted_columns(columns: Iterable[Column]) -> List[Column]:
    return sorted(set(columns), key=Column.sort_key)


@dataclass
class Entry:
    """One value from one result.json."""
    value: float
    path: str
    created: str = ''
    priority: int = 0  # higher wins without conflict (fine-tuned top-1 over the pre-training run's own)
    seed: Seed = None
    device_hours: Optional[float] = None  # of the run itself (its ``cost``), when recorded
    task: str = ''
    config: str = ''  # the run's config, as :func:`config_name` puts it
    protocol: str = ''  # the name of the downstream protocol it ran under ('' : none recorded)
    metric: str = ''  # its name in result.json
    per_image: bool = False  # the run left per-image evidence for it (vitbench.results.per_image)


@dataclass
class Conflict:
    row: RowKey
    column: Column
    entries: List[Entry]  # newest first; the first is the one used
    seed: Seed = None


@dataclass
class Row:
    backbone: str
    recipe: str
    epochs: Optional[int]
    params_M: Optional[float] = None
    gflops: Optional[float] = None
    values: Dict[Column, float] = field(default_factory=dict)  # the mean over seeds
    runs: List[str] = field(default_factory=list)  # the result.json files behind the row
    note: str = ''
    # paper rows only: the named variant the paper's model is, the configs that reproduce the row and the
    # pre-training recipe label of their measured rows
    variant: str = ''
    configs: Tuple[str, ...] = ()
    link_recipe: str = ''
    res: str = ''  # the resolution a ↑R paper row was fine-tuned at ('' : the variant's own), as Column.res
    # the downstream protocols the paper measured the row under, by column kind ('*': every kind; see
    # vitbench.results.paper.cell_protocol)
    protocol: Dict[str, str] = field(default_factory=dict)
    # measured rows only: each cell's value per seed and its summary over seeds
    samples: Dict[Column, Dict[Seed, float]] = field(default_factory=dict)
    stats: Dict[Column, Summary] = field(default_factory=dict)
    cell_configs: Dict[Column, Tuple[str, ...]] = field(default_factory=dict)  # the configs of the runs used
    cell_protocols: Dict[Column, Tuple[str, ...]] = field(default_factory=dict)  # and their protocols' names
    # each cell's runs (one per seed) as the bootstrap resamples them: per-image evidence, or a
    # vitbench.results.bootstrap.Constant for a run that left none
    evidence: Dict[Column, List[object]] = field(default_factory=dict)
    # the cells whose runs stopped because their loss stopped being finite (result.json status 'diverged'), with
    # where, shown as 'diverged', never as a number; a cell another run of which finished shows that run's value
    diverged: Dict[Column, str] = field(default_factory=dict)
    # the price, from the runs' ``cost`` (None: not recorded): pre-training device-hours, pre-training + the
    # task behind each cell, everything the row ran, and the largest peak memory of its runs
    pretrain_hours: Optional[float] = None
    cell_hours: Dict[Column, float] = field(default_factory=dict)
    total_hours: Optional[float] = None
    peak_mem_MB: Optional[float] = None

    @property
    def key(self) -> RowKey:
        return (self.backbone, self.recipe, self.epochs)


@dataclass
class Table:
    rows: List[Row]
    columns: List[Column]
    conflicts: List[Conflict] = field(default_factory=list)
    title: str = ''
    note: str = ''
    id: str = ''
    rejected: List[str] = field(default_factory=list)  # measured: why each result file left out was, one line each
    # measured: per-image evidence that could not be used (the cell keeps its value, without an interval over images)
    warnings: List[str] = field(default_factory=list)

    def best(self, column: Column) -> Optional[float]:
        """The highest value of ``column`` (the lowest for an error: mCE, ECE) when at least two rows have one (a
        single value is no ranking)."""
        values = [r.values[column] for r in self.rows if column in r.values]
        if len(values) < 2:
            return None
        return min(values) if column.kind in LOWER_IS_BETTER else max(values)

    def is_best(self, row: Row, column: Column) -> bool:
        best = self.best(column)
        return best is not None and column in row.values and abs(row.values[column] - best) <= _TOLERANCE


# ---------------------------------------------------------------------------------------------- reading

def find_results(paths: Sequence[str]) -> List[str]:
    """Every ``result.json`` under the given folders (a .json file counts as itself), sorted, no repeats."""
    found = []
    for path in paths:
        if osp.isfile(path):
            found.append(path)
        elif osp.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
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


# the metrics the leaderboard shows, all percentages (result.json stores COCO's AP as percent too)
_PERCENT_METRICS = {task: {metric for metric, _ in metrics} - set(UNBOUNDED_METRICS)
                    for task, metrics in HEADLINE_METRICS.items()}


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

    task = need('task', str, f'one of {TASKS}')
    if task not in TASKS:
        raise LeaderboardError(f"{path}: key 'task' is {task!r}, expected one of {TASKS}")
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
    if record.get('status') not in (None, DIVERGED):
        raise LeaderboardError(f"{path}: key 'status' is {record['status']!r}, expected null or {DIVERGED!r} (a "
                               'training stopped because its loss stopped being finite)')
    metrics = need('metrics', dict, 'an object {metric name: number}')
    for name, value in metrics.items():
        if not _number(value):
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a number")
        if not math.isfinite(value):  # JSON's NaN / Infinity: a diverged or broken run, not a score to rank
            raise LeaderboardError(f"{path}: key 'metrics.{name}' is {value!r}, expected a finite number (did the "
                                   'run diverge? rerun it, or delete this result.json)')
        if name in _PERCENT_METRICS.get(task, ()) and not 0 <= value <= 100:
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
    _optional(path, 'per_image', record.get('per_image'),
              lambda v: isinstance(v, list) and all(isinstance(m, str) for m in v),
              "a list of metric names (those with evidence in per_image.npz beside it)")
    if record.get('backbone_overrides') is not None and not isinstance(record['backbone_overrides'], dict):
        raise LeaderboardError(f"{path}: key 'backbone_overrides' is {record['backbone_overrides']!r}, "
                               'expected an object')
    return record


def recipe_label(pretrain: dict, variant_img_size=None) -> str:
    """'mae'; on other data than ImageNet-1k or with a changed model: 'mae (imagenet_1percent)', 'supervised
    (init_values=None)'; a backbone fine-tuned after pre-training: 'mae + ft-full 50ep' (mode of the fine-tuning),
    '... ↑384' when it was fine-tuned at another resolution than ``variant_img_size`` (the run's variant's own:
    thesis Table 6.12's "ViT-B† @384" is the ↑384 fine-tune's backbone); only the first k pre-trained blocks kept:
    'mae, first 3 blocks'."""
    label = pretrain['recipe']
    data = pretrain.get('data')
    model = pretrain.get('model') or {}
    what = ([str(data)] if data and data != 'imagenet' else []) + [f'{k}={v}' for k, v in sorted(model.items())]
    if what:
        label += f" ({', '.join(what)})"
    if pretrain.get('keep_blocks') is not None:
        label += f", first {int(pretrain['keep_blocks'])} blocks"
    finetune = pretrain.get('finetune')
    if finetune:
        label += f" + ft-{finetune.get('mode', 'full')}"
        if finetune.get('epochs') is not None:
            label += f" {finetune['epochs']}ep"
        if finetune.get('img_size') is not None and variant_img_size is not None and (
                res_label(finetune['img_size']) != res_label(variant_img_size)):
            label += f" ↑{res_label(finetune['img_size'])}"
    return label


def _eval_of(metric: str, eval: str) -> str:
    """The column eval of ``metric``: the record's, with the test set of a METRIC_EVALS metric ('v2', or
    'linear, v2' for a linear probe's)."""
    test_set = METRIC_EVALS.get(metric)
    return eval if test_set is None else test_set if eval == 'ss' else f'{eval}, {test_set}'


def res_label(img_size) -> str:
    """384 or [384, 384] → '384'; [384, 320] → '384x320' (height x width)."""
    if isinstance(img_size, (list, tuple)):
        height, width = (int(v) for v in img_size)
        return str(height) if height == width else f'{height}x{width}'
    return str(int(img_size))


def finetune_res(record: dict) -> str:
    """The resolution that sets a fine-tuning run's cells apart (:attr:`Column.res`): its ``img_size`` when that is
    not its variant's own ``variant_img_size``; '' for other tasks, for fine-tunes at the variant's own resolution and
    for records without the two keys."""
    if record['task'] != 'finetune' or record.get('img_size') is None or record.get('variant_img_size') is None:
        return ''
    res = res_label(record['img_size'])
    return '' if res == res_label(record['variant_img_size']) else res


def columns_of(record: dict) -> List[Tuple[str, Column]]:
    """(metric, column) of every headline metric of the record's task, whether the record has a value or not."""
    res = finetune_res(record)
    return [(metric, Column(kind, record['dataset'], _eval_of(metric, record.get('eval') or 'ss'), res))
            for metric, kind in HEADLINE_METRICS[record['task']]]


def cells_of(record: dict, with_metric: bool = False) -> List[tuple]:
    """The (column, value, priority) cells a record fills (+ the metric's name with ``with_metric``); metrics no
    column shows are left out, and a diverged run fills none."""
    if record.get('status') == DIVERGED:
        return []
    cells = []
    for metric, column in columns_of(record):
        value = record['metrics'].get(metric)
        if value is None or math.isnan(value):
            continue
        cells.append((column, float(value), 1 if record['task'] == 'finetune' else 0) + ((metric,) if with_metric
                                                                                         else ()))
    return cells


def diverged_where(record: dict) -> str:
    """'diverged at iteration 10 (loss nan; last finite 2.31 at 9)' for a diverged record."""
    where = record.get('diverged') or {}
    last = where.get('last_finite_loss')
    return (f"diverged at iteration {where.get('iteration')} (loss {where.get('loss')}"
            + (f"; last finite {last:.4g} at {where.get('last_finite_iteration')}" if last is not None else '') + ')')


def _row_cost(records: List[dict], key: str) -> Optional[float]:
    """The most common value among the row's runs, preferring runs at the variant's own resolution."""
    native = [r for r in records if _at_variant_resolution(r)]
    values = [round(float(r[key]), 4) for r in (native or records) if r.get(key) is not None]
    if not values:
        return None
    return collections.Counter(values).most_common(1)[0][0]


def _at_variant_resolution(record: dict) -> bool:
    if record.get('img_size') is not None and record.get('variant_img_size') is not None:
        return res_label(record['img_size']) == res_label(record['variant_img_size'])
    return 'img_size' not in (record.get('backbone_overrides') or {})  # a record from before the two keys


def _row_order(row: Row):
    base = row.recipe.split(' + ')[0]
    rank = _RECIPE_ORDER.index(base) if base in _RECIPE_ORDER else len(_RECIPE_ORDER) + (base == 'scratch')
    return (row.backbone, rank, row.recipe, -1 if row.epochs is None else row.epochs)


def _cost(record: dict, key: str) -> Optional[float]:
    value = (record.get('cost') or {}).get(key)
    return None if value is None else float(value)


def _mean(values: Iterable[Optional[float]]) -> Optional[float]:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _seed_of(record: dict) -> Seed:
    return None if record.get('seed') is None else int(record['seed'])


def _newest_by_seed(entries: List[Entry]) -> Dict[Seed, List[Entry]]:
    """A cell's runs of the highest priority by seed, newest first: the first of each seed is the one used."""
    top = max(e.priority for e in entries)
    by_seed: Dict[Seed, List[Entry]] = {}
    for e in sorted((e for e in entries if e.priority == top), key=lambda e: e.created, reverse=True):
        by_seed.setdefault(e.seed, []).append(e)
    return by_seed


def _aggregate(key: RowKey, column: Column, by_seed: Dict[Seed, List[Entry]], row: Row,
               conflicts: List[Conflict]) -> None:
    """Fill ``row``'s cell from its runs (:func:`_newest_by_seed`): the newest run of each seed, summarised over
    seeds."""
    for seed, same_seed in by_seed.items():
        distinct = []
        for e in same_seed:
            if all(abs(e.value - d.value) > _TOLERANCE for d in distinct):
                distinct.append(e)
        if len(distinct) > 1:
            conflicts.append(Conflict(key, column, same_seed, seed))
    row.samples[column] = {seed: same_seed[0].value for seed, same_seed in by_seed.items()}
    row.stats[column] = summarize(list(row.samples[column].values()))
    row.cell_configs[column] = tuple(sorted({same_seed[0].config for same_seed in by_seed.values()}))
    row.cell_protocols[column] = tuple(sorted({same_seed[0].protocol for same_seed in by_seed.values()}))
    row.values[column] = row.stats[column].mean
    if row.pretrain_hours is None:
        return
    newest = next(iter(by_seed.values()))[0]
    if newest.task == 'pretrain':  # the pre-training run's own top-1: its price is the pre-training
        row.cell_hours[column] = row.pretrain_hours
        return
    task_hours = _mean(same_seed[0].device_hours for same_seed in by_seed.values())
    if task_hours is not None:  # a downstream cell: the pre-training plus its own task's runs
        row.cell_hours[column] = row.pretrain_hours + task_hours


# how far a run's per-image evidence may recompute its recorded value: the toolboxes round what they report
# (mmseg's mIoU to 0.01, mmdet's AP to 0.001 of a fraction: 0.1 points)
_EVIDENCE_TOLERANCE = 0.051


def _attach_evidence(row: Row, column: Column, used: List[Entry], warnings: List[str]) -> None:
    """The cell's runs (``used``: one per seed) as the bootstrap resamples them, and for a cell of one run that left
    per-image evidence its interval over the test images: it has no other. A cell of several seeds keeps Student's
    t over them: the percentile bootstrap of a handful of seeds is too narrow (3 seeds: about a third of the
    t-interval's width). Evidence that does not recompute the run's recorded value (a per_image.npz of another run)
    is named in ``warnings`` and not used."""
    runs = []
    for e in used:
        evidence = None
        if e.per_image:
            try:
                evidence = per_image.evidence_of(e.path, e.metric)
            except per_image.EvidenceError as error:
                warnings.append(f'{error} (the interval over images of {e.path} is left out)')
        if evidence is not None:
            recomputed = evidence.value(np.ones(len(evidence.ids)))
            if abs(recomputed - e.value) > _EVIDENCE_TOLERANCE:
                warnings.append(f"{osp.join(osp.dirname(e.path), per_image.FILE)}: its '{e.metric}' evidence gives "
                                f'{recomputed:.2f}, the result.json beside it {e.value:.2f}: not the same run\'s; the '
                                'interval over images is left out')
                evidence = None
        runs.append(evidence if evidence is not None else bootstrap.Constant(e.value))
    row.evidence[column] = runs
    if len(runs) == 1 and not isinstance(runs[0], bootstrap.Constant):
        values, n_images = bootstrap.resampled([runs])
        if n_images:
            low, high = bootstrap.percentile_interval(values[0])
            row.stats[column] = Summary(row.stats[column].mean, 1, None, low, high, 'images')


def _row_price(row: Row, records: List[dict]) -> None:
    """Pre-training device-hours (its own runs, else what downstream runs read from their checkpoint), the
    total over every distinct (task, dataset, eval, fine-tuning resolution) the row ran (mean over seeds) and the largest peak memory."""
    own = [_cost(r, 'device_hours') for r in records if r['task'] == 'pretrain']
    pretrain = _mean(own) if any(v is not None for v in own) else _mean(
        _cost(r, 'pretrain_device_hours') for r in records)
    if pretrain is None and row.recipe == 'scratch':
        pretrain = 0.0
    row.pretrain_hours = pretrain
    tasks: Dict[tuple, List[Optional[float]]] = collections.defaultdict(list)
    for r in records:
        if r['task'] != 'pretrain':
            tasks[r['task'], r['dataset'], r.get('eval') or 'ss', finetune_res(r)].append(_cost(r, 'device_hours'))
    task_hours = [_mean(hours) for hours in tasks.values()]
    if pretrain is not None and all(h is not None for h in task_hours):
        row.total_hours = pretrain + sum(task_hours)
    peaks = [p for p in (_cost(r, 'peak_mem_MB') for r in records) if p is not None]
    row.peak_mem_MB = max(peaks) if peaks else None


def build_table(paths: Sequence[str]) -> Table:
    """The measured table from every result.json under ``paths`` (see the module docstring)."""
    records, rejected = [], []
    for path in find_results(paths):  # every bad file is named, and the board of the good ones still made
        try:
            records.append((path, read_result(path)))
        except LeaderboardError as e:
            rejected.append(str(e))
    by_row: Dict[RowKey, List[dict]] = collections.defaultdict(list)
    row_paths: Dict[RowKey, List[str]] = collections.defaultdict(list)
    cells: Dict[Tuple[RowKey, Column], List[Entry]] = collections.defaultdict(list)
    for path, record in records:
        epochs = record['pretrain'].get('epochs')
        key = (record['backbone'], recipe_label(record['pretrain'], record.get('variant_img_size')),
               None if epochs is None else int(epochs))
        by_row[key].append(record)
        row_paths[key].append(path)
        for column, value, priority, metric in cells_of(record, with_metric=True):
            cells[key, column].append(Entry(value, path, record.get('created') or '', priority, _seed_of(record),
                                            _cost(record, 'device_hours'), record['task'],
                                            config_name(record.get('config')),
                                            (record.get('protocol') or {}).get('name', ''), metric,
                                            metric in (record.get('per_image') or ())))

    rows = {key: Row(*key, params_M=_row_cost(recs, 'params_M'), gflops=_row_cost(recs, 'gflops'),
                     runs=row_paths[key]) for key, recs in by_row.items()}
    for key, recs in by_row.items():
        _row_price(rows[key], recs)
    conflicts: List[Conflict] = []
    warnings: List[str] = []
    for (key, column), entries in cells.items():
        by_seed = _newest_by_seed(entries)
        _aggregate(key, column, by_seed, rows[key], conflicts)
        _attach_evidence(rows[key], column, [same_seed[0] for same_seed in by_seed.values()], warnings)
    for key, recs in by_row.items():
        for record in recs:
            if record.get('status') == DIVERGED:
                for _, column in columns_of(record):
                    if column not in rows[key].values:
                        rows[key].diverged[column] = diverged_where(record)
    ordered = sorted(rows.values(), key=_row_order)
    conflicts.sort(key=lambda c: (c.row[0], c.row[1], -1 if c.row[2] is None else c.row[2], c.column.sort_key(),
                                  -1 if c.seed is None else c.seed))
    columns = sorted_columns(c for r in ordered for c in [*r.values, *r.diverged])
    return Table(ordered, columns, conflicts, title='Measured', id='measured', rejected=rejected,
                 warnings=warnings)
