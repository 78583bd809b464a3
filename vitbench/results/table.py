"""The leaderboard: every ``result.json`` under some folders, as one table of measured results.

A row is a (backbone, pre-training recipe, epochs) triple; a column is one downstream measurement:

* ``cls``      ImageNet (or any ``pretrain``/``finetune`` dataset) top-1; a fine-tuning run wins over the
               pre-training run's own top-1 for the same row, and is no conflict with it;
* ``seg``      mIoU per dataset and evaluation (``ss`` single-scale, ``ms`` multi-scale + flip);
* ``box``/``mask``  COCO box / mask AP;
* ``transfer`` top-1 per transfer dataset.

``experiment.eval`` other than ``ss`` (e.g. ``ms``, ``linear``) gives its own column, so a linear probe never
collides with full fine-tuning (an ImageNet fine-tune that trains part of the model records its mode, ``attention``,
``ffn`` or ``linear``, as its eval: ``harness.experiment.result_record.eval_of``). So does a fine-tuning run at another resolution than its variant's own (the papers'
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
seed) that fill a cell with different values are a :class:`Conflict`: the newest is used, and the cell says so with
both values. A cell is one experiment (:mod:`vitbench.results.experiment`): runs of one row and column under another
protocol, digest, schedule as run or evaluation set fill columns of their own, never averaged (``Table.splits`` says
why); a diverged run fills no row (``Table.failed``).
An evaluation record (tools/test.py: ``run.kind`` 'evaluation') is a result of its checkpoint's experiment only when
that checkpoint is its training's final one (``run.checkpoint.final``), or when the checkpoint does not say (a file
vitbench did not train: what the record's own config and ``experiment`` say it is); the evaluation of an
intermediate checkpoint (``final`` false: an epoch before the end) fills no row, and is named in the warnings.
Cells no run fills stay empty (``None``), never zero. Each row also carries the price of its numbers from the
runs' ``cost``: device-hours of its pre-training, of each cell's task, in all, and the peak memory.
Reading and checking a result.json is :mod:`vitbench.results.result_file`; what it fills,
:mod:`vitbench.results.record_cells`; the rows and their cells, :mod:`vitbench.results.rows`; the price,
:mod:`vitbench.results.price`. Rendering is in :mod:`vitbench.results.render`; the paper reference tables in
:mod:`vitbench.results.paper`.
"""
import collections
import os.path as osp
from typing import Dict, List, Sequence, Tuple

import numpy as np

from . import bootstrap, per_image
from .columns import Column, dataset_label, sorted_columns  # noqa: F401 - the table's vocabulary, imported from here
from .experiment import Facets, Variation, facets_of, link_target, split_target, why_apart
from .price import cell_hours, cost, row_number, row_price
from .record_cells import (cells_of, columns_of, diverged_where, finetune_res, recipe_label,  # noqa: F401
                           res_label)
from .result_file import LeaderboardError, config_name, find_results, read_result  # noqa: F401
from .rows import TOLERANCE, Cell, Conflict, Entry, Row, RowKey, Seed, Table  # noqa: F401
from .schema import DIVERGED, EVALUATION
from .stats import Summary, summarize

_RECIPE_ORDER = ('supervised', 'supervised_distilled', 'mae', 'dmae')  # then others by name, scratch last


def _row_order(row: Row):
    base = row.recipe.split(' + ')[0]
    rank = _RECIPE_ORDER.index(base) if base in _RECIPE_ORDER else len(_RECIPE_ORDER) + (base == 'scratch')
    return (row.backbone, rank, row.recipe, -1 if row.epochs is None else row.epochs)


def _seed_of(record: dict) -> Seed:
    return None if record.get('seed') is None else int(record['seed'])


def _newest_by_seed(entries: List[Entry]) -> Dict[Seed, List[Entry]]:
    """A cell's runs of the highest priority by seed, newest first: the first of each seed is the one used."""
    by_seed: Dict[Seed, List[Entry]] = {}
    for e in sorted(_top_priority(entries), key=lambda e: e.created, reverse=True):
        by_seed.setdefault(e.seed, []).append(e)
    return by_seed


def _aggregate(key: RowKey, column: Column, by_seed: Dict[Seed, List[Entry]], row: Row,
               conflicts: List[Conflict]) -> None:
    """Fill ``row``'s cell from its runs (:func:`_newest_by_seed`): the newest run of each seed, summarised over
    seeds; runs of one seed that disagree are a conflict, named in the cell."""
    conflict = []
    for seed, same_seed in by_seed.items():
        distinct = []
        for e in same_seed:
            if all(abs(e.value - d.value) > TOLERANCE for d in distinct):
                distinct.append(e)
        if len(distinct) > 1:
            conflicts.append(Conflict(key, column, same_seed, seed))
            conflict.append(('' if seed is None or len(by_seed) == 1 else f'seed {seed}: ')
                            + 'newest of ' + ', '.join(f'{e.value:.1f}' for e in distinct))
    samples = {seed: same_seed[0].value for seed, same_seed in by_seed.items()}
    stats = summarize(list(samples.values()))
    row.cells[column] = Cell(stats.mean, samples, stats,
                             configs=tuple(sorted({same_seed[0].config for same_seed in by_seed.values()})),
                             protocols=tuple(sorted({same_seed[0].protocol for same_seed in by_seed.values()})),
                             digests=tuple(sorted({same_seed[0].digest for same_seed in by_seed.values()})),
                             hours=cell_hours(row, by_seed), conflict='; '.join(conflict),
                             partial='; '.join(sorted({s[0].partial for s in by_seed.values()} - {''})))


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
    cell = row.cells[column]
    cell.evidence = runs
    if len(runs) == 1 and not isinstance(runs[0], bootstrap.Constant):
        values, n_images = bootstrap.resampled([runs])
        if n_images:
            low, high = bootstrap.percentile_interval(values[0])
            cell.stats = Summary(cell.stats.mean, 1, None, low, high, 'images')


def _row_key(record: dict) -> RowKey:
    epochs = record['pretrain'].get('epochs')
    return (record['backbone'], recipe_label(record['pretrain'], record.get('variant_img_size')),
            None if epochs is None else int(epochs))


def _failed_line(path: str, record: dict) -> str:
    backbone, recipe, epochs = _row_key(record)
    return (f"{backbone} / {recipe} / {'' if epochs is None else epochs} epochs, {record['task']} on "
            f"{record['dataset']}: {diverged_where(record)}: {path}")


def _intermediate_evaluation(record: dict) -> bool:
    run = record.get('run')
    checkpoint = run.get('checkpoint') if isinstance(run, dict) else None
    return (run.get('kind') == EVALUATION and isinstance(checkpoint, dict)
            and checkpoint.get('final') is False) if isinstance(run, dict) else False


def _top_priority(entries: List[Entry]) -> List[Entry]:
    top = max(e.priority for e in entries)
    return [e for e in entries if e.priority == top]


def _with_config(column: Column, config: str) -> Column:
    """``column`` with its runs' config named in its setting ('deit_tiny12h_in1k_300e_ori')."""
    name = osp.splitext(osp.basename(config))[0] if config else 'config unrecorded'
    setting = f'{column.setting}, {name}' if column.setting else name
    return Column(column.kind, column.dataset, column.eval, column.res, column.protocol, setting)


def build_table(paths: Sequence[str]) -> Table:
    """The measured table from every result.json under ``paths`` (see the module docstring)."""
    records, rejected, failed, skipped = [], [], [], []
    for path in find_results(paths):  # every bad file is named, and the board of the good ones still made
        try:
            record = read_result(path)
        except LeaderboardError as e:
            rejected.append(str(e))
            continue
        if record.get('status') == DIVERGED:  # listed in its own section, never in a row
            failed.append(_failed_line(path, record))
        elif _intermediate_evaluation(record):
            skipped.append(f'{path}: an evaluation of {record["run"]["checkpoint"].get("path")}, not the final '
                           'checkpoint of its training: in no row')
        else:
            records.append((path, record))
    by_row: Dict[RowKey, List[dict]] = collections.defaultdict(list)
    row_paths: Dict[RowKey, List[str]] = collections.defaultdict(list)
    by_base: Dict[Tuple[RowKey, Column], List[Tuple[Entry, Facets]]] = collections.defaultdict(list)
    for path, record in records:
        key = _row_key(record)
        by_row[key].append(record)
        row_paths[key].append(path)
        facets = facets_of(record)
        for column, value, priority, metric in cells_of(record, with_metric=True):
            by_base[key, column].append((Entry(value, path, record.get('created') or '', priority, _seed_of(record),
                                               cost(record, 'device_hours'), record['task'],
                                               link_target(config_name(record.get('config')), record.get('options')),
                                               facets.protocol, facets.digest,
                                               facets.partial, metric, metric in (record.get('per_image') or ())),
                                         facets))
    # a pre-training run's own top-1 gives way to a fine-tune's before the experiments are told apart
    for pairs in by_base.values():
        top = max(e.priority for e, _ in pairs)
        pairs[:] = [(e, f) for e, f in pairs if e.priority == top]
    variation = Variation((base, f) for (_, base), pairs in by_base.items() for _, f in pairs)
    cells: Dict[Tuple[RowKey, Column], List[Entry]] = collections.defaultdict(list)
    splits = []
    for (key, base), pairs in by_base.items():
        apart: Dict[Column, Facets] = {}
        # one row's runs of several configs (MAE-lite Table 1's two from-scratch recipes, each its own config and
        # the same row label) are several experiments: each config its own column, named in the setting
        configs = {split_target(e.config)[0] for e, _ in pairs}
        for entry, facets in pairs:
            column = variation.column(base, facets)
            if len(configs) > 1:
                column = _with_config(column, split_target(entry.config)[0])
            cells[key, column].append(entry)
            apart.setdefault(column, facets)
        if len(apart) > 1:
            backbone, recipe, epochs = key
            why = why_apart(list(apart.values()))
            if len(configs) > 1:
                names = ' vs '.join(sorted(osp.splitext(osp.basename(c))[0] for c in configs))
                why = f'config {names}' + (f'; {why}' if why else '')
            splits.append(f"{backbone} / {recipe} / {'' if epochs is None else epochs} epochs, {base.label}: "
                          f'{len(apart)} experiments, not averaged ({why}): '
                          + ', '.join(sorted(c.label for c in apart)))

    rows = {key: Row(*key, params_M=row_number(recs, 'params_M'), gflops=row_number(recs, 'gflops'),
                     runs=row_paths[key]) for key, recs in by_row.items()}
    for key, recs in by_row.items():
        row_price(rows[key], recs)
    conflicts: List[Conflict] = []
    warnings: List[str] = list(skipped)
    for (key, column), entries in cells.items():
        by_seed = _newest_by_seed(entries)
        _aggregate(key, column, by_seed, rows[key], conflicts)
        _attach_evidence(rows[key], column, [same_seed[0] for same_seed in by_seed.values()], warnings)
    ordered = sorted(rows.values(), key=_row_order)
    conflicts.sort(key=lambda c: (c.row[0], c.row[1], -1 if c.row[2] is None else c.row[2], c.column.sort_key(),
                                  -1 if c.seed is None else c.seed))
    columns = sorted_columns(c for r in ordered for c in r.cells)
    return Table(ordered, columns, conflicts, title='Measured', id='measured', rejected=rejected,
                 warnings=warnings, failed=failed, splits=sorted(splits))
