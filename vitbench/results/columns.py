"""A leaderboard column: the kind of measurement (a :class:`~vitbench.results.schema.Kind` of a task's record), the
dataset, the evaluation and the fine-tuning resolution; its label and its place among the columns."""
from dataclasses import dataclass
from typing import Iterable, List

from .schema import dataset_names, kinds

_EVAL_ORDER = ('ss', 'ms')


def dataset_label(name: str) -> str:
    """'ade20k' → 'ADE20k', 'ade20k-demo' → 'ADE20k-demo' (the display names of the tasks' records)."""
    base, sep, suffix = name.partition('-')
    return dataset_names().get(base, base) + sep + suffix


def _dataset_order(name: str):
    """The datasets of the tasks' records in their order, then others by name."""
    base = name.partition('-')[0]
    order = list(dataset_names())
    return (order.index(base) if base in order else len(order), name)


@dataclass(frozen=True)
class Column:
    kind: str  # a column kind of a task's record (vitbench.results.schema.kinds)
    dataset: str
    eval: str = 'ss'
    # a fine-tune at another resolution than the variant's own: that resolution ('384', or '384x320' when not
    # square), shown as "↑384"; '' for everything else
    res: str = ''

    @property
    def label(self) -> str:
        name = dataset_label(self.dataset)
        kind = kinds()[self.kind]
        if kind.eval_always:
            what = (f'{kind.label} {self.eval.upper()}' if self.eval in _EVAL_ORDER
                    else f'{kind.label} ({self.eval})')
        else:
            what = kind.label + ('' if self.eval == 'ss' else f' ({self.eval})')
        return f'{name} {what}' + (f' ↑{self.res}' if self.res else '')

    def at(self, res: str) -> 'Column':
        """This column at fine-tuning resolution ``res`` ('' : the variant's own)."""
        return Column(self.kind, self.dataset, self.eval, res)

    def sort_key(self):
        """By kind (a kind with ``beside`` right after that kind, per dataset), dataset, resolution, eval."""
        every = kinds()
        eval_rank = _EVAL_ORDER.index(self.eval) if self.eval in _EVAL_ORDER else len(_EVAL_ORDER)
        res_rank = tuple(int(n) for n in self.res.split('x')) if self.res else ()  # the variant's own first
        place = every[self.kind].beside or self.kind
        return (list(every).index(place), _dataset_order(self.dataset), res_rank, eval_rank, self.eval,
                self.kind != place, self.kind)


def sorted_columns(columns: Iterable[Column]) -> List[Column]:
    return sorted(set(columns), key=Column.sort_key)
