"""The keep-first-k-blocks experiment of MAE-lite §4 (Figs. 2 and 4), read back from the runs that did it.

Each run is an ordinary fine-tuning or transfer run started from a pre-trained checkpoint with only its first k
blocks kept (``tools/train.py ... --checkpoint PATH --keep-blocks K``; ``keep_blocks`` of the ``Pretrained``
init_cfg, ``backbones.checkpoint.load_checkpoint``) and the rest freshly initialised; its result.json records k
as ``pretrain.keep_blocks``. Here the records become one series per dataset and pre-training recipe: the metric
(mean over seeds) against k. A run from the whole checkpoint counts as k = depth; a run from scratch is each
dataset's baseline (no pre-trained block at all).
"""
from collections import defaultdict
from typing import Dict, Sequence

from backbones import get_variant
from vitbench.results.table import find_results, read_result


def _depth(backbone: str) -> int:
    return int(get_variant(backbone)['kwargs']['depth'])


def keep_blocks_series(paths: Sequence[str], metric: str = 'top1', datasets: Sequence[str] = ()) -> dict:
    """{'metric', 'datasets': {dataset: {'depth', 'scratch': mean | None, 'series': {recipe: {k: mean}},
    'runs': [...]}}} from the result.json files under ``paths`` (of ``datasets`` only, when given)."""
    files = find_results(paths)
    if not files:
        raise FileNotFoundError(f'no result.json under {list(paths)} (the keep-blocks runs write one each)')
    values: Dict[str, Dict[str, Dict[int, list]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    scratch: Dict[str, list] = defaultdict(list)
    depths: Dict[str, set] = defaultdict(set)
    runs: Dict[str, list] = defaultdict(list)
    for path in files:
        record = read_result(path)
        if metric not in record['metrics'] or record['task'] == 'pretrain' or \
                (datasets and record['dataset'] not in datasets):
            continue  # the pre-training runs themselves, runs of other metrics or datasets
        dataset, pretrain, value = record['dataset'], record['pretrain'], float(record['metrics'][metric])
        depth = _depth(record['backbone'])
        depths[dataset].add(depth)
        keep = pretrain.get('keep_blocks')
        if pretrain['recipe'] == 'scratch':
            scratch[dataset].append(value)
        else:
            k = depth if keep is None else int(keep)
            values[dataset][pretrain['recipe']][k].append(value)
        runs[dataset].append(dict(path=path, recipe=pretrain['recipe'], keep_blocks=keep, value=value))
    if not runs:
        raise ValueError(f"none of the {len(files)} result.json files under {list(paths)} has the metric "
                         f"'{metric}' (--metric)" + (f' for {list(datasets)} (--dataset)' if datasets else ''))
    out = {}
    for dataset in sorted(runs):
        if len(depths[dataset]) > 1:
            raise ValueError(f'{dataset}: runs of backbones of different depths {sorted(depths[dataset])}; '
                             'analyse one backbone at a time')
        out[dataset] = dict(
            depth=depths[dataset].pop(),
            scratch=sum(scratch[dataset]) / len(scratch[dataset]) if scratch[dataset] else None,
            series={recipe: {k: sum(v) / len(v) for k, v in sorted(by_k.items())}
                    for recipe, by_k in sorted(values[dataset].items())},
            runs=runs[dataset])
    return dict(metric=metric, datasets=out)
