"""The leaderboard's rows: a (backbone, pre-training recipe, epochs) :class:`Row` holds one :class:`Cell` per
column it fills, each with the mean over seeds and everything behind it; a :class:`Table` is rows and columns."""
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Dict, List, Mapping, Optional, Tuple

from .columns import Column
from .schema import kinds
from .stats import Summary

RowKey = Tuple[str, str, Optional[int]]  # backbone, recipe label, epochs
Seed = Optional[int]  # None: a run that recorded no seed
TOLERANCE = 1e-6  # values closer than this are the same measurement


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
    # the run's config, as vitbench.results.result_file.config_name puts it, with the experiment options it ran
    # with (vitbench.results.experiment.link_target)
    config: str = ''
    protocol: str = ''  # the name of the downstream protocol it ran under ('' : none recorded)
    digest: str = ''  # and the digest of its settings as the run resolved them
    partial: str = ''  # why the run is not its config's whole experiment (vitbench.results.experiment.Facets)
    metric: str = ''  # its name in result.json
    per_image: bool = False  # the run left per-image evidence for it (vitbench.results.per_image)


@dataclass
class Conflict:
    row: RowKey
    column: Column
    entries: List[Entry]  # newest first; the first is the one used
    seed: Seed = None


@dataclass
class Cell:
    """One row's value in one column. A paper row's cell has its value only."""
    value: Optional[float] = None  # the mean over seeds; None: every run of the cell diverged
    samples: Optional[Dict[Seed, float]] = None  # the value of each seed
    stats: Optional[Summary] = None  # the summary over seeds (or a single run's interval over its test images)
    configs: Optional[Tuple[str, ...]] = None  # the configs of the runs used
    protocols: Optional[Tuple[str, ...]] = None  # and their protocols' names
    digests: Optional[Tuple[str, ...]] = None  # and digests (one cell: one protocol, so one of each)
    # the runs (one per seed) as the bootstrap resamples them: per-image evidence, or a
    # vitbench.results.bootstrap.Constant for a run that left none
    evidence: Optional[List[object]] = None
    hours: Optional[float] = None  # the price: the pre-training + the task's runs behind the cell, device-hours
    # runs of one seed that disagree: the rule used and the values ('newest of 29.8, 28.2'), shown in the cell
    conflict: str = ''
    partial: str = ''  # a run of it is not its config's whole experiment (truncated, a subset): why; never linked


def _present(cells: Dict[Column, Cell], part: str) -> Mapping:
    # read-only: a new mapping per access, so a write into it would be lost; it raises instead (write the Cell)
    present = {c: getattr(cell, part) for c, cell in cells.items() if getattr(cell, part) not in (None, '')}
    return MappingProxyType(present)


@dataclass
class Row:
    backbone: str
    recipe: str
    epochs: Optional[int]
    params_M: Optional[float] = None
    gflops: Optional[float] = None
    cells: Dict[Column, Cell] = field(default_factory=dict)
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
    # paper rows: the protocol each linked config resolves to, config -> (name, digest) ('' , '': none), as the
    # harness reads the configs (vitbench.results.reproduction.resolve_linked); a config absent: not resolved
    linked_protocols: Dict[str, Tuple[str, str]] = field(default_factory=dict)
    # the price, from the runs' ``cost`` (None: not recorded): pre-training device-hours, everything the row ran,
    # and the largest peak memory of its runs (each cell's own: Cell.hours)
    pretrain_hours: Optional[float] = None
    total_hours: Optional[float] = None
    peak_mem_MB: Optional[float] = None

    @property
    def key(self) -> RowKey:
        return (self.backbone, self.recipe, self.epochs)

    def cell(self, column: Column) -> Cell:
        """The row's cell of ``column``, created empty when the row has none."""
        return self.cells.setdefault(column, Cell())

    # each part of the cells by column, for the columns that have it (read-only views of ``cells``)
    @property
    def values(self) -> Mapping[Column, float]:
        return _present(self.cells, 'value')

    @property
    def samples(self) -> Mapping[Column, Dict[Seed, float]]:
        return _present(self.cells, 'samples')

    @property
    def stats(self) -> Mapping[Column, Summary]:
        return _present(self.cells, 'stats')

    @property
    def cell_configs(self) -> Mapping[Column, Tuple[str, ...]]:
        return _present(self.cells, 'configs')

    @property
    def cell_protocols(self) -> Mapping[Column, Tuple[str, ...]]:
        return _present(self.cells, 'protocols')

    @property
    def evidence(self) -> Mapping[Column, List[object]]:
        return _present(self.cells, 'evidence')

    @property
    def cell_digests(self) -> Mapping[Column, Tuple[str, ...]]:
        return _present(self.cells, 'digests')

    @property
    def conflicts(self) -> Mapping[Column, str]:
        return _present(self.cells, 'conflict')

    @property
    def cell_hours(self) -> Mapping[Column, float]:
        return _present(self.cells, 'hours')


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
    # measured: the runs that did not finish (result.json status 'diverged'), one line each; they fill no row
    failed: List[str] = field(default_factory=list)
    # measured: the cells of a row split into several experiments (another protocol, schedule, evaluation set),
    # one line each saying why
    splits: List[str] = field(default_factory=list)
    # paper: not named by the board (papers/board.yaml): shown only where a measured cell links to one of its rows
    on_demand: bool = False

    def best(self, column: Column) -> Optional[float]:
        """The highest value of ``column`` (the lowest for an error: mCE, ECE) when at least two rows have one (a
        single value is no ranking)."""
        values = [r.cells[column].value for r in self.rows
                  if column in r.cells and r.cells[column].value is not None]
        if len(values) < 2:
            return None
        return min(values) if kinds()[column.kind].lower_is_better else max(values)

    def is_best(self, row: Row, column: Column) -> bool:
        best = self.best(column)
        value = row.cells[column].value if column in row.cells else None
        return best is not None and value is not None and abs(value - best) <= TOLERANCE
