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
    # the downstream protocol its runs ran under (result.json ``protocol.name``; '' : none), shown after the label
    protocol: str = ''
    # what else sets its runs apart from other runs of the same column on the board (another digest of the same
    # protocol, another schedule as run, another evaluation set: vitbench.results.experiment), '' : nothing
    setting: str = ''

    @property
    def label(self) -> str:
        name = dataset_label(self.dataset)
        kind = kinds()[self.kind]
        if kind.eval_always:
            what = (f'{kind.label} {self.eval.upper()}' if self.eval in _EVAL_ORDER
                    else f'{kind.label} ({self.eval})')
        else:
            what = kind.label + ('' if self.eval == 'ss' else f' ({self.eval})')
        experiment = ' '.join(t for t in (self.protocol, self.setting) if t)
        return f'{name} {what}' + (f' ↑{self.res}' if self.res else '') + (f' · {experiment}' if experiment else '')

    def at(self, res: str) -> 'Column':
        """This column at fine-tuning resolution ``res`` ('' : the variant's own)."""
        return Column(self.kind, self.dataset, self.eval, res, self.protocol, self.setting)

    @property
    def base(self) -> 'Column':
        """The column without its protocol and setting: what a paper row's column names."""
        return Column(self.kind, self.dataset, self.eval, self.res)

    def sort_key(self):
        """By kind (a kind with ``beside`` right after that kind, per dataset), dataset, resolution, eval."""
        every = kinds()
        eval_rank = _EVAL_ORDER.index(self.eval) if self.eval in _EVAL_ORDER else len(_EVAL_ORDER)
        res_rank = tuple(int(n) for n in self.res.split('x')) if self.res else ()  # the variant's own first
        place = every[self.kind].beside or self.kind
        return (list(every).index(place), _dataset_order(self.dataset), res_rank, eval_rank, self.eval,
                self.kind != place, self.kind, self.protocol, self.setting)


def sorted_columns(columns: Iterable[Column]) -> List[Column]:
    return sorted(set(columns), key=Column.sort_key)
