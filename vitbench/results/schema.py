"""The result.json schema's shared vocabulary, written once: the tasks a run can be, each one :class:`Task` record in
one registry, :data:`TASKS`. A record says everything the suite's readers of results need to know of its task: its
headline metrics and the leaderboard column kinds they fill (label, which way is better, plot), which metrics its
toolbox reports as fractions, its datasets' display names, the demo datasets it runs on, its place among the tasks,
and the few ways a task is read differently (a pre-training's price, a fine-tune's resolution). This module
registers no task: each task's package declares its own record (:func:`register`, in a torch-free module of its
own) and registers it when it is imported; readers of results that import no task package load the records first.
Adding a task: docs/extending-task.md. The full record is described in docs/architecture.md."""
import os.path as osp
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

# result.json "status" of a training stopped because its loss stopped being finite (harness.experiment.divergence);
# a record without "status" is of a run that finished
DIVERGED = 'diverged'
DIVERGED_EXIT_STATUS = 3  # tools/train.py's exit status then; the pipeline reports the stage as diverged
DEFAULT_ORDER = 1000  # a task that names no place: after the suite's

# result.json "run": {"kind": TRAINING | EVALUATION, "id": ...}. A training's record is WORK_DIR/result.json; an
# evaluation (tools/test.py) writes its own, WORK_DIR/eval/<checkpoint name without .pth>/result.json, naming the
# checkpoint it scored ("run.checkpoint": path, sha256, the training run it came from and whether it is that
# training's final checkpoint): it never replaces a training's record.
TRAINING, EVALUATION = 'training', 'evaluation'
EVALUATIONS = 'eval'


def evaluation_dir(work_dir: str, checkpoint: str) -> str:
    """Where tools/test.py of ``checkpoint`` with ``--work-dir work_dir`` writes its record, logs and evidence."""
    name = osp.basename(str(checkpoint))
    stem = name[:-len('.pth')] if name.endswith('.pth') else name
    return osp.join(str(work_dir), EVALUATIONS, stem or 'checkpoint')


@dataclass(frozen=True)
class Plot:
    """How the measured leaderboard draws the columns of a kind: ``'bars'`` (one bar per row and column; kinds with
    the same Plot share one figure) or ``'scatter'`` (the value against the backbone's GFLOPs, drawn for the paper
    tables that give GFLOPs too). ``order``: its place among the measured plots, lower first."""
    style: str
    title: str
    ylabel: str
    order: int = 100


@dataclass(frozen=True)
class Kind:
    """A leaderboard column kind: what a column measures, shown as '<dataset> <label>' ('ADE20k mIoU SS')."""
    name: str  # also how a paper row (results/papers/) names the kind: KIND/DATASET[/EVAL]
    label: str
    lower_is_better: bool = False  # an error (mCE, ECE): the best value is the smallest
    eval_always: bool = False  # the label names the eval even when it is 'ss', upper-cased ('SS', 'MS')
    beside: str = ''  # sorted right after this kind's column of the same dataset (mask AP beside box AP)
    # what its columns' names in ``--aggregate`` add to the dataset ('coco_box'); '' : the dataset alone
    aggregate_suffix: str = ''
    plot: Optional[Plot] = None  # None: not drawn
    # a robustness or calibration measure (mCE, ECE): the HTML board shows its columns apart from the downstream
    # ones, in a table folded by default (vitbench/results/column_groups.py), as it does a metric's other test sets
    robustness: bool = False


@dataclass(frozen=True)
class Metric:
    """A headline metric: its key in result.json's ``metrics`` and the column kind it fills."""
    name: str
    kind: Kind
    # measured on another test set of the run's dataset: the column's eval, beside the record's ('v2': "ImageNet
    # top-1 (v2)"); '' : the run's own test set
    test_set: str = ''
    percent: bool = True  # a percentage in [0, 100]; mCE is not (relative to AlexNet's errors: AlexNet is 100)


@dataclass(frozen=True)
class Task:
    """One kind of run (result.json's ``task``) and how every reader of results treats it."""
    name: str
    title: str  # in messages: 'detection'
    metrics: Tuple[Metric, ...]  # its headline metrics, in column order
    # its place among the tasks, lower first: the leaderboard's order of column kinds and datasets, whatever imported
    # first (the suite's tasks take 100 to 500; ties keep the order of registration)
    order: int = DEFAULT_ORDER
    # metric name prefixes its toolbox reports as fractions of 1 (mmdet's 'coco/'); result.json stores percentages
    fraction_prefixes: Tuple[str, ...] = ()
    datasets: Tuple[Tuple[str, str], ...] = ()  # (dataset name, display name) of the datasets the suite knows
    demo_datasets: Tuple[str, ...] = ()  # result.json ``dataset`` of its runs in the demo pipeline
    downstream: bool = False  # a downstream task: its columns enter the cross-task rank (vitbench/results/rank.py)
    # a pre-training: its device-hours are the price of the rows built on it, and its own top-1 (a by-product) the
    # price of the pre-training alone
    pretrains: bool = False
    # a fine-tune of the pre-trained model on its own data: its cells win over the pre-training's own top-1
    # (``priority``), a run at another resolution than its variant's own fills its own "↑384" columns, and a run
    # that trains part of the model records that mode as its eval ('attention', 'ffn', 'linear')
    finetunes: bool = False
    shown_metrics: int = 1  # how many headline metrics a pipeline stage's summary line shows
    # its head runs mmcv's RoIAlign / nms: float16 on GPUs, float32 on CPUs, only the backbone compiled
    roi_ops: bool = False  # (vitbench/engine/amp.py, vitbench/engine/compile.py, tools/train.py)

    @property
    def priority(self) -> int:
        return 1 if self.finetunes else 0

    @property
    def kinds(self) -> Tuple[Kind, ...]:
        return tuple(dict.fromkeys(m.kind for m in self.metrics))



TASKS: Dict[str, Task] = {}  # name -> record, in leaderboard order (Task.order; the first task's kinds come first)


def register(task: Task) -> Task:
    """Add ``task`` to :data:`TASKS`, in its place by :attr:`Task.order`; the same record again changes nothing (a
    record module may run twice: imported, and loaded by a reader of results). Refused: a name taken by another
    record, a column kind named as another task's but not the same (:func:`kinds` would keep only the last), and a
    ``beside`` naming no kind."""
    known = TASKS.get(task.name)
    if known is not None and known != task:
        raise ValueError(f"task '{task.name}' is already registered with another record; pick another name")
    if not isinstance(task.order, int) or isinstance(task.order, bool):
        raise ValueError(f"task '{task.name}' has order={task.order!r}, expected a whole number (its place, lower "
                         'first)')
    owners = {}  # kind name -> the first task that has it, and its Kind
    for other in TASKS.values():
        for kind in other.kinds if other.name != task.name else ():
            owners.setdefault(kind.name, (other, kind))
    for kind in task.kinds:
        other, same = owners.get(kind.name, (None, kind))
        if same != kind:
            raise ValueError(f"kind '{kind.name}' of task '{task.name}' differs from task '{other.name}''s: "
                             'reuse that Kind or pick another name')
        owners.setdefault(kind.name, (task, kind))  # two of the task's own metrics may not differ either
    names = set(owners)
    for kind in task.kinds:
        if kind.beside and kind.beside not in names:  # Column.sort_key would fail on it later, unexplained
            raise ValueError(f"kind '{kind.name}' of task '{task.name}' has beside='{kind.beside}', "
                             f'expected a known kind: {sorted(names)}')
    TASKS[task.name] = task
    ordered = sorted(TASKS.values(), key=lambda t: t.order)  # stable: equal orders keep their registration order
    TASKS.clear()
    TASKS.update((t.name, t) for t in ordered)
    return task


def task_of(name) -> Optional[Task]:
    """The record of task ``name`` (None: no such task, or no task named)."""
    return TASKS.get(name) if isinstance(name, str) else None


def has_roi_ops(name) -> bool:
    """Whether task ``name``'s head runs mmcv's RoIAlign / nms (:attr:`Task.roi_ops`)."""
    task = task_of(name)
    return task is not None and task.roi_ops


def task_names() -> Tuple[str, ...]:
    return tuple(TASKS)


def kinds() -> Dict[str, Kind]:
    """Every column kind by name, in leaderboard order."""
    return {k.name: k for task in TASKS.values() for k in task.kinds}


def downstream_kinds() -> Tuple[str, ...]:
    """The column kinds of the downstream tasks: what the cross-task rank averages by default."""
    return tuple(dict.fromkeys(k.name for task in TASKS.values() if task.downstream for k in task.kinds))


def other_test_sets(kind: str) -> Tuple[str, ...]:
    """The evals of ``kind``'s columns measured on another test set than the run's own (:attr:`Metric.test_set`:
    'v2', 'A', 'R', ... of ImageNet top-1)."""
    return tuple(dict.fromkeys(m.test_set for task in TASKS.values() for m in task.metrics
                               if m.kind.name == kind and m.test_set))


def tasks_of_kind(kind: str) -> Tuple[Task, ...]:
    """The tasks whose records have column kind ``kind``, in leaderboard order (ImageNet top-1: pre-training and
    fine-tuning)."""
    return tuple(task for task in TASKS.values() if any(k.name == kind for k in task.kinds))


def resolution_kinds() -> Tuple[str, ...]:
    """The column kinds of fine-tuning tasks: the kinds whose columns are told apart by resolution ("↑384")."""
    return tuple(dict.fromkeys(k.name for task in TASKS.values() if task.finetunes for k in task.kinds))


def fraction_prefixes() -> Tuple[str, ...]:
    """The metric name prefixes any task's toolbox reports as fractions."""
    return tuple(dict.fromkeys(p for task in TASKS.values() for p in task.fraction_prefixes))


def dataset_names() -> Dict[str, str]:
    """Display names of the known datasets, in leaderboard order."""
    return {name: label for task in TASKS.values() for name, label in task.datasets}

