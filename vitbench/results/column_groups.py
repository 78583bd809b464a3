"""How the HTML board groups its columns: one group per downstream task first (the point of the board), then the
other tasks' own columns (ImageNet top-1 of the pre-training and fine-tuning) under their dataset's name; the
robustness and calibration columns (a :attr:`~vitbench.results.schema.Kind.robustness` kind: mCE, ECE; or a
metric's other test set: ImageNet top-1 on V2, ReaL, A, R, Sketch) go to a table of their own, folded by default,
so that mostly empty columns never push the downstream ones off the screen."""
from dataclasses import dataclass
from typing import List, Sequence, Tuple

from . import schema
from .columns import Column, dataset_label

ROBUSTNESS_TITLE = 'Robustness and calibration'


@dataclass(frozen=True)
class Group:
    title: str
    columns: Tuple[Column, ...]


def is_robustness(column: Column) -> bool:
    kind = schema.kinds().get(column.kind)
    return bool(kind and kind.robustness) or column.eval in schema.other_test_sets(column.kind)


def _task_place(column: Column) -> Tuple[int, int, str]:
    """Downstream tasks first, each in its leaderboard order, titled by the task ('Segmentation'), then the others,
    titled by their dataset ('ImageNet': the top-1 of pre-training and fine-tuning alike)."""
    tasks = schema.tasks_of_kind(column.kind)
    if not tasks:  # a paper column of a kind no task registers
        return 2, 0, column.kind
    order = list(schema.TASKS).index(tasks[0].name)
    if any(t.downstream for t in tasks):
        return 0, order, tasks[0].title[:1].upper() + tasks[0].title[1:]
    return 1, order, dataset_label(column.dataset)


def column_groups(columns: Sequence[Column]) -> Tuple[List[Group], List[Column]]:
    """The groups of the main table, in the order it shows them, and the robustness columns (their own table)."""
    titles, places = {}, {}
    robustness = []
    for column in columns:
        if is_robustness(column):
            robustness.append(column)
            continue
        rank, order, title = _task_place(column)
        places.setdefault(title, (rank, order))
        titles.setdefault(title, []).append(column)
    ordered = sorted(titles, key=lambda title: places[title])
    return [Group(title, tuple(titles[title])) for title in ordered], robustness
