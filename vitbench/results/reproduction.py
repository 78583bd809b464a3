"""Reported vs reproduced: the measured cells that are the same experiment as a paper row, with the paper's
number and Δ = measured − reported beside them; and the check that lists every such cell whose |Δ| exceeds a
tolerance (the regression check mmpretrain runs against its model zoo).

A measured cell is *linked* to a paper row when
  * the paper row names, in ``config``, the config of every run behind the cell (recipe, data and protocol:
    :func:`~vitbench.results.table.config_name` of the runs' ``result.json`` ``config``);
  * the measured row's backbone, pre-training recipe and epochs are the paper row's ``variant``, ``recipe`` and
    ``epochs`` (a run shortened with ``--cfg-options`` records the epochs it trained, so it links to nothing;
    one fine-tuning config run from MAE and from distilled MAE checkpoints gives two experiments);
  * the paper row reports that column (dataset and evaluation: top-1, ``v2``, ``real``, ``ms``, ...), at the same
    fine-tuning resolution: a ↑384 paper row (``img_size: 384``) links to the measured "ImageNet top-1 ↑384" cell
    of a 384 fine-tune, a row without ``img_size`` to the cells at the variant's own resolution.
Rows of several tables may report the same experiment (the loader makes them agree): one link lists them all.
"""
import html
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from .paper import link_column
from .stats import Summary
from .table import Column, Row, Table


@dataclass(frozen=True)
class Link:
    row: Row  # the measured row
    column: Column
    measured: Summary  # the cell over its seeds
    reported: float
    sources: Tuple[Tuple[str, str], ...]  # (paper table id, the paper's model name) of every row reporting it

    @property
    def delta(self) -> float:
        return self.measured.mean - self.reported

    @property
    def source(self) -> str:
        return '; '.join(f'{table}: {model}' for table, model in self.sources)


def link_reported(measured: Table, paper: Sequence[Table]) -> List[Link]:
    """Every measured cell linked to paper rows (see the module docstring), in table order."""
    index: Dict[tuple, List[Tuple[str, Row]]] = {}
    for table in paper:
        for row in table.rows:
            for config in row.configs:
                for column, value in row.values.items():
                    key = (config, row.variant, row.link_recipe, row.epochs, link_column(row, column))
                    index.setdefault(key, []).append((table.id, row, value))
    links = []
    for row in measured.rows:
        for column in measured.columns:
            configs = row.cell_configs.get(column) or ()
            if column not in row.stats or len(configs) != 1:
                continue  # no value, or seeds from different configs: not one experiment
            reporting = index.get((configs[0], row.backbone, row.recipe, row.epochs, column))
            if reporting:
                links.append(Link(row, column, row.stats[column], reporting[0][2],
                                  tuple((table_id, paper_row.backbone) for table_id, paper_row, _ in reporting)))
    return links


def links_by_cell(links: Sequence[Link]) -> Dict[Tuple[int, Column], Link]:
    return {(id(link.row), link.column): link for link in links}


def fmt_reported(link: Optional[Link]) -> str:
    """' (paper 83.1, Δ −0.4)' after a linked cell's value; '' for any other cell."""
    if link is None:
        return ''
    return f' (paper {link.reported:.1f}, Δ {link.delta:+.1f})'


CSV_FIELDS = ('reported', 'Δ reported', 'reported in')  # per measured column, after its own fields


def csv_cells(link: Optional[Link], number) -> List[str]:
    """The :data:`CSV_FIELDS` of one cell (``number`` formats a float)."""
    return ['', '', ''] if link is None else [number(link.reported), number(link.delta), link.source]


def beyond(links: Sequence[Link], tolerance: float) -> List[Link]:
    """The linked cells whose |Δ| exceeds ``tolerance`` (percentage points)."""
    return [link for link in links if abs(link.delta) > tolerance + 1e-9]


# ---------------------------------------------------------------------------------------------- the section

LEGEND = ('Measured cells that are the same experiment as a paper row: the config of the runs is one the row '
          'names, with its variant, pre-training recipe and epochs (vitbench/results/paper_results.yaml, key '
          '`config`). '
          'Δ = measured − reported; `tools/leaderboard.py RUNS --check-reproduction TOL` lists those beyond ±TOL.')
HEADER = ['backbone', 'pretraining', 'epochs', 'metric', 'measured', 'reported', 'Δ', 'paper']


def section_rows(links: Sequence[Link]) -> List[List[str]]:
    """The rows of the "Reported vs reproduced" table, in :data:`HEADER`'s order."""
    rows = []
    for link in links:
        m = link.measured
        measured = f'{m.mean:.1f}' if m.n < 2 else f'{m.mean:.1f} ± {m.std:.1f} (n={m.n})'
        rows.append([link.row.backbone, link.row.recipe, '' if link.row.epochs is None else str(link.row.epochs),
                     link.column.label, measured, f'{link.reported:.1f}', f'{link.delta:+.1f}', link.source])
    return rows


def markdown_section(links: Sequence[Link]) -> List[str]:
    if not links:
        return []
    lines = ['## Reported vs reproduced', '', LEGEND, '', '| ' + ' | '.join(HEADER) + ' |',
             '|' + '|'.join('---:' if 2 <= i <= 6 and i != 3 else '---' for i in range(len(HEADER))) + '|']
    return lines + ['| ' + ' | '.join(text.replace('|', '\\|') for text in row) + ' |' for row in section_rows(links)]


def html_section(links: Sequence[Link]) -> str:
    if not links:
        return ''
    e = html.escape
    head = ''.join(f'<th>{e(h)}</th>' for h in HEADER)
    body = ['<tr>' + ''.join(f'<td class="num">{e(t)}</td>' if 2 <= i <= 6 and i != 3 else f'<td>{e(t)}</td>'
                             for i, t in enumerate(row)) + '</tr>' for row in section_rows(links)]
    return (f'<h2>Reported vs reproduced</h2><p>{e(LEGEND)}</p><table><thead><tr>{head}</tr></thead><tbody>\n'
            + '\n'.join(body) + '\n</tbody></table>')


def check_lines(links: Sequence[Link], tolerance: float) -> List[str]:
    """The report of ``--check-reproduction``: one line per linked cell beyond the tolerance, then a summary."""
    bad = beyond(links, tolerance)
    lines = [f'{link.row.backbone} / {link.row.recipe} / {link.row.epochs} epochs, {link.column.label}: measured '
             f'{link.measured.mean:.2f} (n={link.measured.n}), reported {link.reported:.2f} ({link.source}), '
             f'Δ {link.delta:+.2f}' for link in bad]
    lines.append(f'{len(links)} measured cells linked to paper rows; {len(bad)} beyond ±{tolerance:g}')
    return lines
