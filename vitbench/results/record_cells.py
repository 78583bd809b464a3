"""What one result.json fills on the leaderboard: its row's recipe label, and the cells (column, value) of its
task's headline metrics, as the task's record (:mod:`vitbench.results.schema`) says."""
import math
from typing import List, Tuple

from .columns import Column
from .schema import DIVERGED, task_of


def recipe_label(pretrain: dict, variant_img_size=None) -> str:
    """'mae'; on other data than ImageNet-1k, with another tokenizer or a changed model: 'mae (imagenet_1percent)',
    'beit (tokenizer=kmeans-8192, init_values=0.1, rel_pos_bias=True)', 'supervised (init_values=None)'; a backbone
    fine-tuned after pre-training: 'mae + ft-full 50ep' (mode of the fine-tuning),
    '... ↑384' when it was fine-tuned at another resolution than ``variant_img_size`` (the run's variant's own:
    thesis Table 6.12's "ViT-B† @384" is the ↑384 fine-tune's backbone); only the first k pre-trained blocks kept:
    'mae, first 3 blocks'."""
    label = pretrain['recipe']
    data = pretrain.get('data')
    model = pretrain.get('model') or {}
    tokenizer = [f"tokenizer={pretrain['tokenizer']}"] if pretrain.get('tokenizer') else []
    what = ([str(data)] if data and data != 'imagenet' else []) + tokenizer + \
        [f'{k}={v}' for k, v in sorted(model.items())]
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


def _eval_of(metric, eval: str) -> str:
    """The column eval of ``metric``: the record's, with the test set of a metric measured on another one ('v2',
    or 'linear, v2' for a linear probe's)."""
    test_set = metric.test_set
    return eval if not test_set else test_set if eval == 'ss' else f'{eval}, {test_set}'


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
    if not task_of(record['task']).finetunes or record.get('img_size') is None or (
            record.get('variant_img_size') is None):
        return ''
    res = res_label(record['img_size'])
    return '' if res == res_label(record['variant_img_size']) else res


def columns_of(record: dict) -> List[Tuple[str, Column]]:
    """(metric, column) of every headline metric of the record's task, whether the record has a value or not."""
    res = finetune_res(record)
    return [(metric.name, Column(metric.kind.name, record['dataset'], _eval_of(metric, record.get('eval') or 'ss'),
                                 res))
            for metric in task_of(record['task']).metrics]


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
        cells.append((column, float(value), task_of(record['task']).priority) + ((metric,) if with_metric
                                                                                       else ()))
    return cells


def diverged_where(record: dict) -> str:
    """'diverged at iteration 10 (loss nan; last finite 2.31 at 9)' for a diverged record."""
    where = record.get('diverged') or {}
    last = where.get('last_finite_loss')
    return (f"diverged at iteration {where.get('iteration')} (loss {where.get('loss')}"
            + (f"; last finite {last:.4g} at {where.get('last_finite_iteration')}" if last is not None else '') + ')')


