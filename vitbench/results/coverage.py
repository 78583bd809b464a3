"""How much of the seed papers runs: ``docs/coverage.md`` and ``docs/coverage.json``, rendered from the map of the
papers (:mod:`.paper_map`) by ``tools/coverage.py``: each entry's counts and state (the rules are in
:mod:`.paper_map`'s docstring) and why the rest does not run or link. Torch-free."""
import json
from dataclasses import dataclass
from typing import Dict, List, Sequence

from .paper_map import (DOCUMENTS, LeaderboardError, MapTable, board_numbers, link_fields, link_targets, load_map,
                        row_benchmark, row_runnable, row_runs)

NAMES = {'thesis': 'Touvron, PhD thesis (2022), chapters 2-6', 'cait': 'CaiT (ICCV 2021)',
         'three_things': '"Three things everyone should know about Vision Transformers" (ECCV 2022)',
         'maelite': 'MAE-lite (ICML 2023)'}
_COUNTS = ('rows', 'quoted', 'recorded', 'linked', 'runnable')


@dataclass(frozen=True)
class Coverage:
    document: str
    table: str
    title: str
    rows: int
    quoted: int
    recorded: int
    linked: int
    runnable: int
    state: str
    why: str
    same_as: str = ''


def coverage(tables: Sequence[MapTable]) -> List[Coverage]:
    """The counts and state of every entry (a same_as entry has its table's counts)."""
    own = {t.key: _counts(t) for t in tables if not t.same_as}
    out = []
    for table in tables:
        c = own[table.same_as or table.key]
        out.append(Coverage(table.document, table.number, table.title, *c, same_as=table.same_as))
    return out


def _counts(table: MapTable) -> tuple:
    # rows with a number (KIND/DATASET keys; a benchmark row's are in its note or the benchmark's table)
    recorded = sum(any('/' in k for k in r) or bool(row_benchmark(r)) for r in table.rows)
    quoted = max(table.n_quoted, sum(bool(r.get('quoted')) for r in table.rows))
    rows = max(table.n_rows, recorded)
    linked = sum(bool(link_targets(r)) for r in table.rows) if table.id else 0  # the board's tables only
    runnable = sum(row_runnable(r) for r in table.rows)
    own = sum(row_runnable(r) for r in table.rows if not r.get('quoted'))
    if table.state == 'not_reproducible':
        state = table.state
    elif own and own >= rows - quoted:
        state = 'whole'
    else:
        state = 'part' if own else 'none'
    if state not in ('whole',) and not table.why:
        raise LeaderboardError(f"{table.key}: state {state}: say 'why' the other rows do not run")
    if state == 'not_reproducible' and runnable:
        raise LeaderboardError(f'{table.key}: not_reproducible, yet {runnable} rows name a config')
    why = ' '.join(w for w in (table.why if state != 'whole' else '', _unlinked_why(table)) if w)
    return rows, quoted, recorded, linked, runnable, state, why


def _unlinked_why(table: MapTable) -> str:
    """Why runnable rows of a table are not linked ('' : all are): what each lacks that a link needs."""
    reasons: Dict[str, int] = {}
    for row in table.rows:
        if not row_runnable(row) or (table.id and link_targets(row)):
            continue
        if row_benchmark(row) and not row_runs(row):
            why = ('measured by tools/benchmark.py, not trained: the leaderboard shows its ratios beside the '
                   "paper's")
        elif not any('/' in k for k in row):
            why = "no number recorded (a figure's plotted row)"
        elif table.number.startswith('Figure') and not table.id:
            why = "a figure's row: the figure's plot compares it (tools/analyze.py), not the leaderboard"
        elif not board_numbers(row):
            why = 'its numbers are an analysis of runs (tools/analyze.py), not a leaderboard column'
        elif row.get('quoted') and not link_targets(row):
            why = "quoted from another paper, without the variant / recipe / epochs its rerun records"
        elif table.id and any(other is not row and link_targets(other) and row_runs(other) == row_runs(row)
                              for other in table.rows):
            why = 'the same run as a row the board links (the table prints that setting twice)'
        else:
            missing = [k for k, v in link_fields(row).items() if v is None]
            why = f"no {' / '.join(missing)} that a measured run records" if missing else 'not on the leaderboard'
        reasons[why] = reasons.get(why, 0) + 1
    return '; '.join(f'{n} runnable row{"s" * (n > 1)} not linked: {why}' for why, n in reasons.items()) + (
        '.' if reasons else '')


def current() -> List[Coverage]:
    return coverage(load_map())


def to_json(entries: Sequence[Coverage]) -> str:
    tables = [dict(document=c.document, table=c.table, title=c.title, **{k: getattr(c, k) for k in _COUNTS},
                   state=c.state, why=c.why, **({'same_as': c.same_as} if c.same_as else {})) for c in entries]
    return json.dumps(dict(tables=tables), indent=1, ensure_ascii=False) + '\n'


def totals(entries: Sequence[Coverage]) -> Dict[str, Dict[str, int]]:
    """Per document and 'all': tables and figures by state; rows counted once (a same_as entry adds none)."""
    out = {}
    for document in (*DOCUMENTS, 'all'):
        mine = [c for c in entries if document in ('all', c.document)]
        t = {f'tables_{s}': sum(c.state == s for c in mine if not c.table.startswith('Figure'))
             for s in ('whole', 'part', 'none', 'not_reproducible')}
        t['tables'] = sum(not c.table.startswith('Figure') for c in mine)
        t['figures'] = sum(c.table.startswith('Figure') for c in mine)
        t.update({k: sum(getattr(c, k) for c in mine if not c.same_as) for k in _COUNTS})
        out[document] = t
    return out


def to_markdown(entries: Sequence[Coverage]) -> str:
    tot = totals(entries)
    lines = ['# Coverage of the papers', '',
             '<!-- generated by tools/coverage.py from vitbench/results/papers/; do not edit -->', '',
             'How much of the seed documents vitbench reruns. Each numbered result table (and each figure whose '
             'numbers a user would rerun) has one entry in `vitbench/results/papers/<document>.yaml`: its rows '
             'with the paper\'s numbers, the configs that reproduce them, its protocol and why the rest does not '
             'run (`python tools/coverage.py` renders this page from them).', '',
             '- **rows**: rows the table prints; **quoted**: of them, numbers of other papers (a state counts '
             'only the own rows); **recorded**: rows whose numbers are in the map; **runnable**: rows a config '
             'reproduces (`config` or `run`) or `tools/benchmark.py` measures (`benchmark`: throughput, memory, a '
             'step\'s cost; ratios beside the paper\'s on the board, never linked, '
             '[benchmarks.md](benchmarks.md#paper-tables-of-speed-and-memory-as-pipeline-stages)); **linked**: rows the leaderboard links a measured cell to (each '
             '`config` and `run`, the latter with its `cfg_options`, of a row with numbers, variant, recipe and '
             'epochs as its runs record them: it shows the paper\'s number and Δ beside a run of that config made '
             'with those options, under the protocol the config defines). Every table with such a row has a '
             'leaderboard id; `board.yaml`\'s tables are always on the board, the others where a measured cell '
             'links to them ([leaderboard.md](leaderboard.md#reported-vs-reproduced-and-the-recipe-audit)). A '
             'figure\'s rows, numbers of an analysis (`tools/analyze.py`) and rows without numbers are runnable, '
             'not linked: the table\'s why says so.',
             '- **state**: `whole` (every own row runnable), `part`, `none`, `not_reproducible` (with why). A '
             'table that another document prints again points to it (`same_as`); its rows are counted once.', '',
             'To run a table\'s runnable rows: `python tools/pipeline.py --table thesis:6.12` (the document and the '
             'table as listed below; `--dry-run` shows the stages). Each row runs its config with its overrides and '
             'backbone, after the pre-training it `needs` (run once for the rows that share it), and a leaderboard '
             'ends the pipeline with the paper\'s numbers beside the measured ones ([pipeline.md](pipeline.md#one-'
             'paper-table)).', '',
             '## Totals', '',
             '| document | tables | whole | in part | not yet | not reproducible | figures | rows | quoted | recorded '
             '| runnable | linked |', '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|']
    for document in (*DOCUMENTS, 'all'):
        t = tot[document]
        name = '**all**' if document == 'all' else NAMES[document]
        lines.append(f"| {name} | {t['tables']} | {t['tables_whole']} | {t['tables_part']} | {t['tables_none']} | "
                     f"{t['tables_not_reproducible']} | {t['figures']} | {t['rows']} | {t['quoted']} | "
                     f"{t['recorded']} | {t['runnable']} | {t['linked']} |")
    for document in DOCUMENTS:
        lines += ['', f'## {NAMES[document]}', '', '| table | title | rows | quoted | recorded | runnable | linked '
                  '| state | why |', '|---|---|---:|---:|---:|---:|---:|---|---|']
        for c in entries:
            if c.document != document:
                continue
            title = c.title.replace('|', '\\|')
            if c.same_as:
                title += f' (as {c.same_as.replace(":", " ")})'
            why = c.why.replace('|', '\\|')
            lines.append(f'| {c.table} | {title} | {c.rows} | {c.quoted} | {c.recorded} | {c.runnable} | '
                         f'{c.linked} | {c.state} | {why} |')
    return '\n'.join(lines) + '\n'
