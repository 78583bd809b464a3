"""What makes two runs of one leaderboard cell the same experiment, beyond the row (backbone, pre-training, epochs)
and the column (task, dataset, evaluation, resolution): the protocol they ran (``result.json`` ``protocol``: name
and digest of its resolved settings, heads included), the options the run changed its config with (``options``:
its ``--cfg-options`` but those that say where files are or how the run logs, :func:`experiment_options`; an
ablation row of a paper table is its config plus such options), the schedule as run (``schedule``: iterations or
epochs trained, and configured) and the evaluation set (``eval_set``: how many images, and a hash of their ids).

Runs that differ in any of these are never averaged: they fill different columns. A column always names its
protocol; the digest, options, schedule and evaluation set are named only where the board holds runs of the same
column that differ in them (so a board whose runs agree reads as before), the schedule only among runs of one task (a
pre-training run's own top-1 and a fine-tune's share the ImageNet column, as before: the fine-tune wins), and never
for a pre-training run, whose epochs are its row's.
Records without these keys (older runs) count as one more value, "unrecorded"; without ``options``, as a run
with none (older runs recorded no options, and the paper links of their configs stay as they were).
"""
import collections
import json
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from .columns import Column
from .schema import task_of

# the records' keys: schedule {"unit": "iter"|"epoch", "run": int, "configured": int}; eval_set {"images": int,
# "ids_sha256": str, "subset": bool}
UNITS = ('iter', 'epoch')

# ``--cfg-options`` that are not ``options`` of a run's experiment: where its files are and are written (a weights
# file's path: the record's ``pretrain`` says where its backbone came from), how it loads them, logs and saves, how
# it is launched, and ``experiment.*``, which the record states itself (task, dataset, backbone, eval, pre-training
# recipe: its row and column). Every other option is part of its experiment.
_WHERE_AND_HOW = ('work_dir', 'launcher', 'log_level', 'env_cfg', 'visualizer', 'vis_backends', 'log_processor',
                  'default_hooks', 'resume', 'load_from', 'randomness', 'experiment')  # first key (seed: ``seed``)
_WHERE_AND_HOW_LEAVES = ('data_root', 'data_prefix', 'num_workers', 'persistent_workers', 'pin_memory',
                         'prefetch_factor', 'backend_args', 'file_client_args', 'checkpoint')  # last key


def experiment_options(options: Optional[dict]) -> dict:
    """The options of ``options`` (dotted ``--cfg-options`` keys -> values) that change the experiment: all but
    :data:`_WHERE_AND_HOW` / :data:`_WHERE_AND_HOW_LEAVES`, as plain JSON values (sorted by key)."""
    kept = {str(k): v for k, v in (options or {}).items()
            if str(k).split('.')[0] not in _WHERE_AND_HOW and str(k).split('.')[-1] not in _WHERE_AND_HOW_LEAVES}
    return json.loads(json.dumps({k: kept[k] for k in sorted(kept)}, default=repr))


def options_text(options: Optional[dict]) -> str:
    """The canonical text of experiment options ('' : none): '{"model.distillation":null}'."""
    kept = experiment_options(options)
    return json.dumps(kept, sort_keys=True, separators=(',', ':')) if kept else ''


def link_target(config: str, options: Optional[dict] = None) -> str:
    """What a paper row links and a measured cell ran: its config, with the experiment options it ran with after a
    space ('configs/pretrain/cait_s24_in1k_400e.py {"model.distillation":null}'); a config path has no space."""
    text = options_text(options)
    return f'{config} {text}' if text else config


def split_target(target: str) -> Tuple[str, dict]:
    """:func:`link_target`'s inverse: (config, options)."""
    config, _, text = target.partition(' ')
    return config, (json.loads(text) if text else {})


@dataclass(frozen=True)
class Facets:
    """One run's experiment besides its row and column."""
    task: str
    protocol: str = ''  # name ('' : none recorded)
    digest: str = ''
    options: str = ''  # the experiment options it ran with (options_text; '' : none, or not recorded)
    schedule: Optional[Tuple[str, int, int]] = None  # (unit, run, configured); None: not recorded
    eval_set: Optional[Tuple[int, str]] = None  # (images, ids_sha256); None: not recorded
    subset: bool = False  # evaluated on part of its dataset (e.g. --cfg-options val_dataloader.dataset.indices=100)
    pretrains: bool = False  # a pre-training run: its schedule is its row's epochs already, never a column's setting

    @property
    def partial(self) -> str:
        """Why the run is not its config's whole experiment ('' : it is): stopped before its configured schedule,
        or evaluated on a subset. Such a run never stands beside a paper's number."""
        reasons = []
        if self.schedule is not None and self.schedule[1] < self.schedule[2]:
            reasons.append(f'trained {schedule_text(self.schedule)}')
        if self.subset:
            reasons.append(f'evaluated on a subset ({eval_set_text(self.eval_set, False)})')
        return ' and '.join(reasons)


def facets_of(record: dict) -> Facets:
    protocol = record.get('protocol') or {}
    schedule, eval_set = record.get('schedule'), record.get('eval_set')
    return Facets(record['task'], protocol.get('name', ''), protocol.get('digest', ''),
                  options_text(record.get('options')),
                  None if not schedule else (schedule['unit'], int(schedule['run']), int(schedule['configured'])),
                  None if not eval_set else (int(eval_set['images']), eval_set['ids_sha256']),
                  bool((eval_set or {}).get('subset')), bool(task_of(record['task']).pretrains))


def schedule_text(schedule: Optional[Tuple[str, int, int]]) -> str:
    """'40 iters'; a run stopped before its configured end: '8 of 40 iters'; 'schedule unrecorded'."""
    if schedule is None:
        return 'schedule unrecorded'
    unit, run, configured = schedule
    plural = f'{unit}s'
    return f'{run} {plural}' if run == configured else f'{run} of {configured} {plural}'


def eval_set_text(eval_set: Optional[Tuple[int, str]], with_hash: bool) -> str:
    if eval_set is None:
        return 'eval set unrecorded'
    return f'{eval_set[0]} images' + (f' #{eval_set[1][:6]}' if with_hash else '')


def options_label(text: str) -> str:
    """'model.distillation=null'; 'no options'."""
    if not text:
        return 'no options'
    return ', '.join(f'{k}={json.dumps(v)}' for k, v in json.loads(text).items())


class Variation:
    """What varies among the runs of each column (before protocol and setting) on one board."""

    def __init__(self, runs: Iterable[Tuple[Column, Facets]]):
        self.digests: Dict[tuple, set] = collections.defaultdict(set)
        self.options: Dict[Column, set] = collections.defaultdict(set)
        self.schedules: Dict[tuple, set] = collections.defaultdict(set)
        self.eval_sets: Dict[Column, set] = collections.defaultdict(set)
        for column, f in runs:
            self.digests[column, f.protocol].add(f.digest)
            self.options[column].add(f.options)
            if not f.pretrains:
                self.schedules[column, f.task].add(f.schedule)
            self.eval_sets[column].add(f.eval_set)

    def column(self, base: Column, f: Facets) -> Column:
        """The run's column: ``base`` with its protocol, and the setting that tells it from the board's other runs
        of ``base``."""
        parts = []
        if len(self.digests[base, f.protocol]) > 1:
            parts.append(f'#{f.digest[:6]}' if f.digest else 'digest unrecorded')
        if len(self.options[base]) > 1:
            parts.append(options_label(f.options))
        if not f.pretrains and len(self.schedules[base, f.task]) > 1:
            parts.append(schedule_text(f.schedule))
        sets = self.eval_sets[base]
        if len(sets) > 1:
            same_count = sum(1 for s in sets if s is not None and f.eval_set is not None and s[0] == f.eval_set[0])
            parts.append(eval_set_text(f.eval_set, same_count > 1))
        return Column(base.kind, base.dataset, base.eval, base.res, f.protocol, ', '.join(parts))


def why_apart(facets: List[Facets]) -> str:
    """'protocol upernet_xcit160k vs upernet_beit160k; schedule 8 iters vs 40 iters': what the experiments of
    one split cell differ in."""
    reasons = []
    for what, values in (('protocol', [f.protocol or 'none' for f in facets]),
                         ('protocol digest', [f'{f.protocol or "none"} #{f.digest[:6] or "-"}' for f in facets]),
                         ('options', [options_label(f.options) for f in facets]),
                         ('schedule', [schedule_text(f.schedule) for f in facets]),
                         ('evaluation set', [eval_set_text(f.eval_set, True) for f in facets])):
        distinct = list(dict.fromkeys(values))
        if len(distinct) > 1:
            reasons.append(f"{what} {' vs '.join(distinct)}")
    if len(reasons) > 1 and reasons[0].startswith('protocol ') and reasons[1].startswith('protocol digest'):
        del reasons[1]  # another protocol has another digest: the name says it
    return '; '.join(reasons)
