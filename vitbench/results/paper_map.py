"""The map of the seed papers: every numbered result table of the seed documents (the thesis' chapters 2-6, CaiT,
"Three things", MAE-lite), and each figure whose numbers a user would rerun, has one entry, its one home, in
``vitbench/results/papers/<document>.yaml``: its rows with the paper's numbers, for each own row the config that
reproduces it (``config``: as the leaderboard links it; ``run``: a config, a base config plus ``cfg_options``, or a
swapped ``backbone``; ``needs``: the pre-training config whose ``backbone.pth`` the row starts from, or
``{config: path, cfg_options: {...}}`` for that config run with overrides), its protocol, and
why the rest does not run. ``papers/board.yaml`` names the tables the
leaderboard shows, in its order (:func:`vitbench.results.paper.load_paper_tables` reads their rows from here).

The counts of a table (:class:`vitbench.results.coverage.Coverage`, counted and rendered there):
  * ``rows``: the rows it prints (``n_rows``, or the rows recorded when all are); ``quoted``: of them, another
    paper's numbers (``n_quoted``, or the recorded rows marked ``quoted: true``);
  * ``recorded``: rows whose numbers are here (a plotted figure's row may name its config alone); ``linked``:
    rows that the leaderboard links a measured cell to (:func:`link_targets`: each ``config`` and ``run``, with its
    ``cfg_options``, of a row with numbers, ``variant``, ``recipe`` and ``epochs``, :func:`link_fields`);
    ``runnable``: rows a config reproduces
    (``config`` or ``run``: ``tools/pipeline.py --table`` runs them; a quoted row too, where the suite reruns the
    other paper's experiment);
  * (a table's own ``benchmark: {mode: paper}``: its training rows also state their speed in their notes, which
    ``tools/pipeline.py --table`` measures in a benchmark stage beside the trainings; the counts are the rows')
  * (a table's own ``prepare: [{argv: [a tools/ script, ...], creates: path}]``: what its trainings read and a tool
    makes first, e.g. BEiT's k-means tokenizer file: ``tools/pipeline.py --table`` runs each as a command stage
    before every training, done when ``creates`` exists)
  * a ``benchmark`` row (``benchmark: {mode: paper | parallel | pretrain, OPTION: value}``) is a number that
    ``tools/benchmark.py MODE`` measures rather than a training (images/s, peak memory, a step's time): recorded
    (its numbers are in its note or the benchmark's own table) and runnable (``tools/pipeline.py --table`` runs one
    benchmark stage per distinct spec, whose record the leaderboard shows as measured ratios beside the paper's:
    :mod:`vitbench.results.benchmark_record`), never linked (no training run records it);
  * a ``run`` with ``test: true`` is an evaluation, not a training: ``tools/test.py`` of its config (and
    ``cfg_options``: another test resolution) on the model its ``needs`` trained (that run's last checkpoint), as a
    ``test`` stage of ``tools/pipeline.py --table`` after it; runnable like a training row (thesis Figure 5.4's
    models tested at resolutions they were not trained at);
  * ``state``: ``whole`` when every own (not quoted) row is runnable, ``part`` when some are, ``none`` when none
    is, and ``not_reproducible`` (written, with ``why``) when nothing of it can run here (private data, another field).
A table printed again by another document (the thesis' CaiT tables) says ``same_as`` and has its counts there.

Every table (not a figure) with a row that can link has a leaderboard id (written ``id``, else :func:`auto_id`:
``thesis_table6_2``, ``cait_table1``), so that a measured cell can link to any row the suite reruns. ``board.yaml`` lists the tables the
board always shows, in its order; the others are shown only on a board where a measured cell links to one of their
rows (:func:`vitbench.results.reproduction.shown_tables`), so a board of a few runs does not fill with paper rows.
"""
import os.path as osp
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from vitbench.yaml_file import read_yaml

from .experiment import link_target
from .result_file import LeaderboardError

PAPERS = osp.join(osp.dirname(osp.abspath(__file__)), 'papers')
DOCUMENTS = ('thesis', 'cait', 'three_things', 'maelite')
STATES = ('whole', 'part', 'none', 'not_reproducible')
_KEYS = ('number', 'id', 'title', 'source', 'protocol', 'note', 'rows', 'n_rows', 'n_quoted', 'same_as', 'state',
         'why', 'benchmark', 'prepare')
MAP_ROW_KEYS = ('quoted', 'run', 'needs', 'teacher', 'benchmark')  # row keys of the map the leaderboard does not read
_NUMBER = re.compile(r'^(Figure )?\d+(\.\d+)?$')
# the heading of a table without a written 'source' on the leaderboard: '<document>, Table 6.2: <title>'
SHORT_NAMES = {'thesis': 'Touvron, PhD thesis (2022)', 'cait': 'CaiT (ICCV 2021)',
               'three_things': '"Three things everyone should know about Vision Transformers" (ECCV 2022)',
               'maelite': 'MAE-lite (ICML 2023)'}
RECIPE_OPTION, EPOCHS_OPTION = 'experiment.pretrain.recipe', 'experiment.pretrain.epochs'
# numbers of the map that an analysis computes from runs (tools/analyze.py), not a leaderboard column: a row with
# only these is runnable, never linked
ANALYSIS_KINDS = ('disagreement',)
# the suites of tools/benchmark.py a map row's ``benchmark: {mode: ...}`` may name (the others measure no paper row)
BENCHMARK_MODES = ('paper', 'parallel', 'pretrain')


@dataclass(frozen=True)
class Run:
    """One way to run a row: a config, with ``cfg_options`` overrides and a swapped ``backbone`` where given;
    ``needs``: the pre-training config whose exported ``backbone.pth`` it starts from (``tools/pipeline.py --table``
    runs that first and passes it as ``--checkpoint``), run with ``needs_options`` (the map's
    ``needs: {config: path, cfg_options: {...}}``: e.g. the pre-training without its distillation); ``teacher``:
    the config (run with ``teacher_options``) whose exported model, its ``backbone.pth``, is the run's distillation
    teacher (``tools/pipeline.py --table`` trains it first and passes the file as ``--teacher``: a teacher that
    another stage produces, e.g. a convnet trained on the same small dataset); ``test``: not a training but an
    evaluation, ``tools/test.py CONFIG`` (with ``cfg_options``, e.g. another test resolution) of the model that the
    ``needs`` config trained, its last checkpoint (a curve of one model tested at several resolutions)."""
    config: str
    cfg_options: Dict[str, object] = field(default_factory=dict)
    backbone: str = ''
    needs: str = ''
    needs_options: Dict[str, object] = field(default_factory=dict)
    teacher: str = ''
    teacher_options: Dict[str, object] = field(default_factory=dict)
    test: bool = False


def _needs(value) -> tuple:
    """The map's ``needs`` (a config path, or ``{config: path, cfg_options: {...}}``) as (config, options)."""
    if isinstance(value, dict):
        if set(value) - {'config', 'cfg_options'} or not isinstance(value.get('cfg_options') or {}, dict):
            raise TypeError(value)
        return value['config'], dict(value.get('cfg_options') or {})
    return value or '', {}


@dataclass
class MapTable:
    document: str
    number: str
    title: str
    id: str = ''  # the leaderboard's id (written, else auto_id where a row can link); '' : not on the board
    spec: Optional[dict] = None  # what the leaderboard reads (id, source, note, protocol, rows)
    rows: List[dict] = field(default_factory=list)
    n_rows: int = 0
    n_quoted: int = 0
    same_as: str = ''
    state: str = ''  # as written: only 'not_reproducible'
    why: str = ''
    # the table's own ``benchmark: {mode: paper}``: its rows that train also state their speed in their notes
    # (thesis Tables 3.5, 6.7, 6.8), which tools/benchmark.py measures beside the trainings
    benchmark: Optional[dict] = None
    # the table's own ``prepare``: commands whose file its trainings read (``[{argv: [...], creates: path}]``)
    prepare: List[dict] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f'{self.document}:{self.number}'


def row_runs(row: dict) -> List[Run]:
    """Every way a row runs: its leaderboard ``config``s, then its ``run``s (each with the row's ``needs``, unless a
    ``run`` names its own)."""
    configs = row.get('config') or []
    needs, needs_options = _needs(row.get('needs'))
    teacher = _needs(row.get('teacher'))  # the form of needs: a config path or {config: path, cfg_options: {...}}
    runs = [Run(c, needs=needs, needs_options=needs_options, teacher=teacher[0], teacher_options=teacher[1])
            for c in ([configs] if isinstance(configs, str) else configs)]
    spec = row.get('run') or []
    for item in [spec] if isinstance(spec, (str, dict)) else spec:
        if isinstance(item, str):
            item = dict(config=item)
        own = _needs(item['needs']) if item.get('needs') else (needs, needs_options)
        own_teacher = _needs(item['teacher']) if item.get('teacher') else teacher
        test = item.get('test', False)
        if not isinstance(test, bool) or (test and not own[0]):
            raise TypeError(item)
        runs.append(Run(item['config'], dict(item.get('cfg_options') or {}), str(item.get('backbone') or ''),
                        *own, *own_teacher, test))
    return runs


def row_benchmark(row: dict) -> Optional[dict]:
    """The row's ``benchmark`` spec ({mode: ..., OPTION: value}: ``tools/benchmark.py MODE --OPTION value``), or
    None for a row that trains."""
    spec = row.get('benchmark')
    return dict(spec) if spec else None


def row_runnable(row: dict) -> bool:
    """A config reproduces the row (:func:`row_runs`), or tools/benchmark.py measures it (:func:`row_benchmark`)."""
    return bool(row_runs(row) or row_benchmark(row))


def _check_prepare(prepare, where: str) -> None:
    good = isinstance(prepare, list) and all(
        isinstance(p, dict) and set(p) == {'argv', 'creates'} and isinstance(p['creates'], str)
        and isinstance(p['argv'], list) and p['argv'] and all(isinstance(a, str) for a in p['argv'])
        and p['argv'][0].startswith('tools/') for p in prepare)
    if prepare is not None and not good:
        raise LeaderboardError(f"{where}: 'prepare' is {prepare!r}, expected a list of {{argv: [a tools/ script, "
                               'ARG, ...], creates: path} (the file a command makes before the trainings)')


def _check_benchmark(row: dict, where: str) -> None:
    spec = row.get('benchmark')
    if spec is None:
        return
    ok = isinstance(spec, dict) and spec.get('mode') in BENCHMARK_MODES and all(
        isinstance(k, str) and isinstance(v, (str, int, float, list)) and not isinstance(v, bool)
        for k, v in spec.items())
    if not ok:
        raise LeaderboardError(f"{where}: 'benchmark' is {spec!r}, expected {{mode: one of {BENCHMARK_MODES}, "
                               "OPTION: value}} (tools/benchmark.py MODE --OPTION value)")


def load_map(folder: str = PAPERS) -> List[MapTable]:
    """Every entry of the documents' files, in document order, then as each file lists them."""
    tables, ids = [], {}
    for document in DOCUMENTS:
        path = osp.join(folder, f'{document}.yaml')
        data = read_yaml(path, LeaderboardError)
        if not isinstance(data, dict) or data.get('document') != document or not isinstance(data.get('tables'), list):
            raise LeaderboardError(f"{path}: expected 'document: {document}' and a list 'tables'")
        numbers = set()
        for i, spec in enumerate(data['tables']):
            table = _table(document, spec, f'{path}: tables[{i}]')
            if table.number in numbers:
                raise LeaderboardError(f'{path}: {table.number!r} has two entries; a table has one home')
            numbers.add(table.number)
            if table.id:
                if table.id in ids:
                    raise LeaderboardError(f'{path}: id {table.id!r} is also {ids[table.id]}')
                ids[table.id] = table.key
            tables.append(table)
    keys = {t.key: t for t in tables}
    for table in tables:
        if table.same_as and (table.same_as not in keys or keys[table.same_as].same_as):
            raise LeaderboardError(f'{table.key}: same_as {table.same_as!r} is not an entry with rows of its own')
    return tables


def _table(document: str, spec, where: str) -> MapTable:
    if not isinstance(spec, dict):
        raise LeaderboardError(f'{where}: expected a mapping with keys {_KEYS}')
    unknown = set(spec) - set(_KEYS)
    if unknown:
        raise LeaderboardError(f'{where}: unknown key(s) {sorted(unknown)}; expected {_KEYS}')
    number = spec.get('number')
    if not isinstance(number, str) or not _NUMBER.match(number):
        raise LeaderboardError(f"{where}: 'number' is {number!r}, expected the number as printed ('6.12', 'Figure 3')")
    where = f'{where} ({document} {number})'
    title = spec.get('title') or spec.get('source')
    if not isinstance(title, str) or not title:
        raise LeaderboardError(f"{where}: needs a 'title' (or the leaderboard's 'source')")
    rows = spec.get('rows') or []
    if not isinstance(rows, list) or not all(isinstance(r, dict) and isinstance(r.get('model'), str) for r in rows):
        raise LeaderboardError(f"{where}: 'rows' must be a list of mappings with 'model'")
    for row in rows:
        try:
            runs = row_runs(row)
        except (KeyError, TypeError, AttributeError):
            raise LeaderboardError(f"{where} ({row['model']}): 'run' is {row.get('run')!r} (needs: "
                                   f"{row.get('needs')!r}, teacher: {row.get('teacher')!r}), expected a config "
                                   "path, {config: path, cfg_options: {...}, backbone: variant} or a list of them "
                                   "(needs: a config path or {config: path, cfg_options: {...}}; teacher: the same; "
                                   "test: true, an evaluation of the model that needs trains, with needs)")
        bad = [c for r in runs for c in (r.config, *(x for x in (r.needs, r.teacher) if x))
               if not (isinstance(c, str) and c.startswith('configs/') and c.endswith('.py'))]
        if bad:
            raise LeaderboardError(f"{where} ({row['model']}): {bad} is not a path 'configs/<folder>/<name>.py'")
    for row in rows:
        _check_link_fields(row, f"{where} ({row['model']})")
        _check_benchmark(row, f"{where} ({row['model']})")
    _check_benchmark(spec, where)
    _check_prepare(spec.get('prepare'), where)
    table = MapTable(document, number, title, id=str(spec.get('id') or ''), rows=rows,
                     n_rows=_count(spec, 'n_rows', where), n_quoted=_count(spec, 'n_quoted', where),
                     same_as=str(spec.get('same_as') or ''), state=str(spec.get('state') or ''),
                     why=' '.join(str(spec.get('why') or '').split()), benchmark=spec.get('benchmark'),
                     prepare=list(spec.get('prepare') or []))
    if not table.id and not table.same_as and not number.startswith('Figure') and any(link_targets(r) for r in rows):
        table.id = auto_id(document, number)
    if table.id:
        if not rows or not isinstance(spec.get('source', ''), str):
            raise LeaderboardError(f"{where}: a table with an id is the leaderboard's: it needs 'rows' (and "
                                   "'source', its heading there, a string)")
        source = spec.get('source') or (f"{SHORT_NAMES[document]}, {'' if number.startswith('Figure') else 'Table '}"
                                        f'{number}: {title}')
        table.spec = dict({k: spec[k] for k in ('note', 'protocol') if k in spec}, id=table.id, source=source,
                          rows=[_board_row(r) for r in rows])
    if table.same_as and (rows or table.n_rows or table.state or table.why):
        raise LeaderboardError(f'{where}: a same_as entry holds nothing else; its rows are in {table.same_as}')
    if table.state not in ('', 'not_reproducible'):
        raise LeaderboardError(f"{where}: 'state' is {table.state!r}; only 'not_reproducible' is written "
                               '(whole / part / none follow from the rows)')
    if table.n_rows and table.n_rows < len(rows):
        raise LeaderboardError(f'{where}: n_rows {table.n_rows} < {len(rows)} rows recorded')
    return table


def auto_id(document: str, number: str) -> str:
    """The leaderboard id of a table that writes none: 'thesis_table6_2', 'cait_table1', 'thesis_figure6_7'."""
    kind = 'figure' if number.startswith('Figure') else 'table'
    return f"{document}_{kind}{number.replace('Figure ', '').replace('.', '_')}"


def _run_option(runs: Sequence[Run], key: str):
    """The value every run of a row sets ``key`` to with its cfg_options (None: not all set it alike)."""
    values = [r.cfg_options.get(key) for r in runs]
    return values[0] if values and values[0] is not None and all(v == values[0] for v in values) else None


def link_fields(row: dict) -> Dict[str, object]:
    """What a measured row must match to link to ``row``, as its runs record it: ``variant`` (else the ``backbone``
    every run swaps in), ``recipe`` (else the ``experiment.pretrain.recipe`` label every run sets with its
    cfg_options: an ablation row's label, which its runs record as their pre-training recipe) and ``epochs`` (else
    ``experiment.pretrain.epochs`` of its runs); None where neither says."""
    runs = row_runs(row)
    backbones = {r.backbone for r in runs}
    return dict(variant=row.get('variant') or (backbones.pop() if len(backbones) == 1 and '' not in backbones
                                               else None),
                recipe=row.get('recipe') if row.get('recipe') is not None else _run_option(runs, RECIPE_OPTION),
                epochs=row.get('epochs') if row.get('epochs') is not None else _run_option(runs, EPOCHS_OPTION))


def _check_link_fields(row: dict, where: str) -> None:
    """A row's ``recipe`` / ``epochs`` and the labels its runs record must agree, or the row could never link (a
    recipe label may add what else sets the run apart, as its records do: 'supervised:RandAugment (init_values=None)',
    :func:`vitbench.results.record_cells.recipe_label`)."""
    runs = row_runs(row)
    for key, option in (('recipe', RECIPE_OPTION), ('epochs', EPOCHS_OPTION)):
        recorded = {r.cfg_options[option] for r in runs if option in r.cfg_options}
        if row.get(key) is not None and any(v != row[key] and not (key == 'recipe' and str(row[key]).startswith(
                f'{v} (')) for v in recorded):
            raise LeaderboardError(f"{where}: '{key}' is {row[key]!r} but its run records {option}="
                                   f'{sorted(recorded, key=str)}: a measured run of it could not link; make them '
                                   'agree')


def link_targets(row: dict) -> List[str]:
    """What the leaderboard links a row by (:func:`vitbench.results.experiment.link_target`): each way it runs, its
    config with the ``cfg_options`` of its ``run`` (an ablation row links to the runs made with those options,
    never to a run of the bare config, and a row without options never to a run with them); a swapped ``backbone``
    only where it is the row's ``variant``. A row with ``config`` links always (the leaderboard checks it names
    variant, recipe and epochs); a row with ``run`` alone when it has numbers, a ``variant``, ``recipe`` and
    ``epochs`` (what a measured row must match, :func:`link_fields`); [] otherwise."""
    fields = link_fields(row)
    if not row.get('config') and not (board_numbers(row) and all(v is not None for v in fields.values())):
        return []
    return list(dict.fromkeys(link_target(r.config, r.cfg_options) for r in row_runs(row)
                              if not r.backbone or r.backbone == fields['variant']))


def board_numbers(row: dict) -> List[str]:
    """The row's numbers that are leaderboard columns (KIND/DATASET[/EVAL] keys, but :data:`ANALYSIS_KINDS`)."""
    return [k for k in row if '/' in k and k.split('/')[0] not in ANALYSIS_KINDS]


def _board_row(row: dict) -> dict:
    """A map row as the leaderboard reads it: its link targets as ``config`` (with the :func:`link_fields` they
    need), without the map's own keys."""
    out = {k: v for k, v in row.items() if k not in MAP_ROW_KEYS and k != 'config'
           and not ('/' in k and k.split('/')[0] in ANALYSIS_KINDS)}
    targets = link_targets(row)
    if targets:
        out['config'] = targets
        out.update({k: v for k, v in link_fields(row).items() if out.get(k) is None})
    return out


def _count(spec: dict, key: str, where: str) -> int:
    value = spec.get(key) or 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise LeaderboardError(f'{where}: {key!r} is {value!r}, expected a count')
    return value


def board_specs(ids: Sequence[str], folder: str = PAPERS) -> List[dict]:
    """The leaderboard's tables (``ids``, in that order) as :func:`~vitbench.results.paper.load_paper_tables`
    reads them."""
    by_id = {t.id: t for t in load_map(folder) if t.id}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise LeaderboardError(f'{folder}/board.yaml names {missing}, which no document lists')
    return [by_id[i].spec for i in ids]


def linkable_specs(board: Sequence[str], folder: str = PAPERS) -> List[dict]:
    """The map's tables with an id that ``board`` does not name, in document order: the leaderboard links measured
    cells to their rows and shows them only where one links."""
    return [t.spec for t in load_map(folder) if t.id and t.id not in set(board)]
