"""The leaderboard as a tidy CSV: one line per cell (a row's value in one column), beside the wide CSV whose line
is a row. A reader loads it as it is, ``pandas.read_csv('board.tidy.csv')``, and filters or pivots it: one header,
a fixed set of fields whatever columns the board has, numbers as numbers (empty when absent), text fields
formula-safe as in the wide CSV (:class:`~vitbench.results.render_csv.SafeCsvWriter`).

Measured cells come first (``source`` ``measured``), with the paper's number where the cell is the same experiment
as a paper row; then the paper tables' cells (``source`` ``paper: <table id>``), never mixed with the measured."""
import io
from typing import Optional, Sequence

from .columns import Column
from .plain_text import neutralize
from .render_csv import SafeCsvWriter
from .reproduction import links_by_cell, match_reported
from .rows import Row
from .schema import kinds
from .table import Table

FIELDS = ('source', 'backbone', 'recipe', 'epochs', 'column', 'kind', 'dataset', 'eval', 'res', 'protocol',
          'value', 'std', 'ci95_low', 'ci95_high', 'interval_over', 'n', 'lower_is_better', 'best',
          'paper_value', 'paper_delta', 'paper_source', 'conflict')


def _number(value: Optional[float]) -> str:
    """Full precision, as the run recorded it (the wide CSV rounds to 4 decimals, the pages to 1)."""
    return '' if value is None else repr(round(float(value), 6))


def _cell(table: Table, row: Row, column: Column, measured: bool, source: str, link=None) -> list:
    cell = row.cells[column]
    summary = cell.stats
    kind = kinds().get(column.kind)
    stats = ['', '', '', '', '1' if cell.value is not None else ''] if summary is None else [
        _number(summary.std), _number(summary.ci95_low), _number(summary.ci95_high),
        summary.interval if summary.ci95_low is not None else '', str(summary.n)]
    return [source, row.backbone, row.recipe, '' if row.epochs is None else str(row.epochs), column.label,
            column.kind, column.dataset, column.eval, column.res, column.protocol, _number(cell.value), *stats,
            '' if kind is None else str(kind.lower_is_better), str(measured and table.is_best(row, column)),
            _number(link.reported) if link else '', _number(link.delta) if link else '',
            link.source if link else '', cell.conflict or '']


def render_tidy_csv(measured: Table, paper: Sequence[Table] = ()) -> str:
    """One line per filled cell, :data:`FIELDS` in order: measured rows in the board's order, columns in theirs,
    then each paper table's."""
    buf = io.StringIO()
    writer = SafeCsvWriter(buf)
    writer.writerow(FIELDS)
    links = links_by_cell(match_reported(measured, paper)[0])
    for row in measured.rows:
        for column in measured.columns:
            if column in row.cells:
                writer.writerow(_cell(measured, row, column, True, 'measured', links.get((id(row), column))))
    for table in paper:
        for row in table.rows:
            for column in table.columns:
                if column in row.cells and row.cells[column].value is not None:
                    writer.writerow(_cell(table, row, column, False, f'paper: {table.id}'))
    return neutralize(buf.getvalue())
