"""The price of a row's numbers, from its runs' result.json ``cost``: device-hours of its pre-training, of each
cell (the pre-training + the cell's task), of everything the row ran, and the peak memory; and the row's
parameters and GFLOPs as its runs recorded them."""
import collections
from typing import Dict, Iterable, List, Optional

from .record_cells import finetune_res, res_label
from .rows import Entry, Row, Seed
from .schema import task_of


def cost(record: dict, key: str) -> Optional[float]:
    value = (record.get('cost') or {}).get(key)
    return None if value is None else float(value)


def mean(values: Iterable[Optional[float]]) -> Optional[float]:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def _pretrains(record: dict) -> bool:
    return task_of(record['task']).pretrains


def row_number(records: List[dict], key: str) -> Optional[float]:
    """The most common value of ``key`` (params_M, gflops) among the row's runs, preferring runs at the variant's
    own resolution."""
    native = [r for r in records if _at_variant_resolution(r)]
    values = [round(float(r[key]), 4) for r in (native or records) if r.get(key) is not None]
    if not values:
        return None
    return collections.Counter(values).most_common(1)[0][0]


def _at_variant_resolution(record: dict) -> bool:
    if record.get('img_size') is not None and record.get('variant_img_size') is not None:
        return res_label(record['img_size']) == res_label(record['variant_img_size'])
    return 'img_size' not in (record.get('backbone_overrides') or {})  # a record from before the two keys


def row_price(row: Row, records: List[dict]) -> None:
    """Pre-training device-hours (its own runs, else what downstream runs read from their checkpoint), the
    total over every distinct (task, dataset, eval, fine-tuning resolution) the row ran (mean over seeds) and the
    largest peak memory."""
    own = [cost(r, 'device_hours') for r in records if _pretrains(r)]
    pretrain = mean(own) if any(v is not None for v in own) else mean(
        cost(r, 'pretrain_device_hours') for r in records)
    if pretrain is None and row.recipe == 'scratch':
        pretrain = 0.0
    row.pretrain_hours = pretrain
    tasks: Dict[tuple, List[Optional[float]]] = collections.defaultdict(list)
    for r in records:
        if not _pretrains(r):
            tasks[r['task'], r['dataset'], r.get('eval') or 'ss', finetune_res(r)].append(cost(r, 'device_hours'))
    task_hours = [mean(hours) for hours in tasks.values()]
    if pretrain is not None and all(h is not None for h in task_hours):
        row.total_hours = pretrain + sum(task_hours)
    peaks = [p for p in (cost(r, 'peak_mem_MB') for r in records) if p is not None]
    row.peak_mem_MB = max(peaks) if peaks else None


def cell_hours(row: Row, by_seed: Dict[Seed, List[Entry]]) -> Optional[float]:
    """The price of a cell (its runs by seed, newest first): the row's pre-training plus the cell's task's runs
    (mean over seeds); a pre-training run's own top-1 costs the pre-training alone. None: not recorded."""
    if row.pretrain_hours is None:
        return None
    newest = next(iter(by_seed.values()))[0]
    if task_of(newest.task).pretrains:
        return row.pretrain_hours
    task_hours = mean(same_seed[0].device_hours for same_seed in by_seed.values())
    return None if task_hours is None else row.pretrain_hours + task_hours
