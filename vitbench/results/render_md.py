"""The leaderboard as Markdown: the measured table, the reported-vs-reproduced row_cells, the paired Δ, the
cross-task rank, the warnings, then the paper reference tables in their own section. Names from result files pass
as text only: no raw HTML, link or hidden character (:func:`vitbench.results.plain_text.markdown_safe`)."""
from typing import List, Optional, Sequence, Tuple

from .baseline import Deltas
from .plain_text import markdown_safe
from .rank import Ranking
from .render_text import (DELTA_LEGEND, FAILED_INTRO, FAILED_TITLE, LEGEND, PAPER_INTRO, SPLIT_INTRO, SPLIT_TITLE,
                          conflict_lines, delta_header, delta_rows, failed_lines, is_text, rank_header, rank_notes,
                          rank_rows, relative_path, row_cells, table_header, where_text)
from .reproduction import links_by_cell, markdown_section, match_reported
from .table import Table


def _code(text: str) -> str:
    """A path as code, unless it holds what a code span cannot show as written (a backtick; a '<', which the page
    writes as an entity that a code span would show raw): then as text."""
    return text if '`' in text or '<' in text else f'`{text}`'


def _md_cell(text: str) -> str:
    return text.replace('|', '\\|').replace('\n', ' ')


def _md_table(table: Table, measured: bool, links=None) -> List[str]:
    head = table_header(table, measured)
    lines = ['| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if is_text(i, head) else '---:' for i in range(len(head))) + '|']
    for row in table.rows:
        cells = [f'**{text}**' if best else text for text, best, _ in row_cells(table, row, measured, links)]
        lines.append('| ' + ' | '.join(map(_md_cell, cells)) + ' |')
    return lines


def _md_deltas(deltas: Deltas, table: Table) -> List[str]:
    head = delta_header(deltas, table)
    lines = [f'## Δ vs {deltas.baseline} (paired by seed)', '', DELTA_LEGEND, '',
             '| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if i < 2 or i == 3 else '---:' for i in range(len(head))) + '|']
    for cells in delta_rows(deltas, table):
        lines.append('| ' + ' | '.join(_md_cell(text) for text, _ in cells) + ' |')  # the star marks it
    return lines


def _md_ranking(ranking: Ranking) -> List[str]:
    head = rank_header(ranking)
    if ranking.refused:  # a board that cannot be ranked honestly says so, with no table
        return ['## Cross-task rank', '', *'\n\n'.join(rank_notes(ranking)).split('\n')]
    lines = ['## Cross-task rank', '', *[f'{n}\n' for n in rank_notes(ranking)],
             '| ' + ' | '.join(map(_md_cell, head)) + ' |',
             '|' + '|'.join('---' if i in (1, 2) else '---:' for i in range(len(head))) + '|']
    lines += ['| ' + ' | '.join(map(_md_cell, cells)) + ' |' for cells in rank_rows(ranking)]
    return lines


def render_markdown(measured: Table, paper: Sequence[Table], sources: Sequence[str] = (),
                    deltas: Optional[Deltas] = None, figures: Sequence[Tuple[str, bytes]] = (),
                    ranking: Optional[Ranking] = None, benchmarks: Sequence = ()) -> str:
    out = ['# vitbench leaderboard', '', '## Measured', '']
    n_runs = len({p for r in measured.rows for p in r.runs})
    out.append(f'{n_runs} runs (result.json){where_text(sources, _code)}. {LEGEND}')
    out.append('')
    links, mismatches = match_reported(measured, paper)
    out += _md_table(measured, True, links_by_cell(links)) if measured.rows else ['(no result.json found)']
    if links or mismatches:
        out += [''] + markdown_section(links, mismatches)
    if deltas is not None:
        out += [''] + _md_deltas(deltas, measured)
    if ranking is not None:
        out += [''] + _md_ranking(ranking)
    if measured.conflicts:
        out += ['', '## Warnings: conflicting duplicate runs', '',
                'The same cell is filled by runs that disagree:', '']
        out += [f'- {line}' for line in conflict_lines(measured, relative_path)]
    if measured.splits:
        out += ['', f'## {SPLIT_TITLE}', '', SPLIT_INTRO, '']
        out += [f'- {_md_cell(line)}' for line in measured.splits]
    if measured.failed:
        out += ['', f'## {FAILED_TITLE}', '', FAILED_INTRO, '']
        out += [f'- {_md_cell(line)}' for line in failed_lines(measured)]
    if measured.rejected:
        out += ['', '## Result files left out', '']
        out += [f'- {_md_cell(message)}' for message in measured.rejected]
    if figures:
        out += ['', '## Figures', ''] + [f'- {_code(title)}' for title, _ in figures]
    if benchmarks:
        from .benchmark_record import markdown_lines
        out += [''] + markdown_lines(benchmarks, _code)
    if paper:
        out += ['', '## Paper reference results (not measured here)', '', PAPER_INTRO]
        for table in paper:
            out += ['', f'### {table.title}', '']
            if table.note:
                out += [table.note, '']
            out += _md_table(table, False)
    return markdown_safe('\n'.join(out) + '\n')


