"""Writing the leaderboard: Markdown, CSV or a self-contained HTML page (tables + base64 PNG plots; its tables sort
and filter in the browser, :mod:`vitbench.results.html_interactive`).

Every format keeps the measured table and the paper reference tables apart: Markdown and HTML in their own
sections, CSV in a ``section`` column (``measured`` rows first, then ``paper: <table id>``). A cell measured
over several seeds reads ``mean ± std (n=k)`` (the 95 % interval in the HTML tooltip and in the CSV); with a
``baseline``, the paired Δ of every row against it follows the measured table. A measured cell that is the same
experiment as a paper row (:mod:`vitbench.results.reproduction`) reads ``value (paper X, Δ d)``, and a "Reported
vs reproduced" table lists those cells with their sources. The cross-task rank ends the Markdown and HTML
pages and fills a ``rank ...`` group of CSV columns. Beside a wide CSV (one line per row) goes a tidy one (one line
per cell, :mod:`vitbench.results.render_tidy`): ``board.csv`` and ``board.tidy.csv``. Text from result files is
written harmless in every format (:mod:`vitbench.results.plain_text`).

Each format is its own module (:mod:`vitbench.results.render_md`, :mod:`vitbench.results.render_csv`,
:mod:`vitbench.results.render_html`, over the text they share, :mod:`vitbench.results.render_text`); this one
picks the format and writes the files.
"""
import os.path as osp
from typing import Callable, Dict, Optional, Sequence, Tuple

from vitbench.fileio import atomic_write_text

from .baseline import paired_deltas
from .rank import cross_task_rank
from .render_csv import render_csv
from .render_html import INTERVALS, render_html
from .render_md import render_markdown
from .render_tidy import render_tidy_csv
from .table import Table

FORMATS = ('md', 'csv', 'html', 'tidy')  # tidy: the CSV of one line per cell
TIDY_SUFFIX = '.tidy.csv'
__all__ = ['FORMATS', 'INTERVALS', 'format_of', 'measured_and_paper', 'render', 'render_csv', 'render_html',
           'render_markdown', 'render_tidy_csv', 'tidy_path', 'write_leaderboard']


def render(fmt: str, measured: Table, paper: Sequence[Table], sources: Sequence[str] = (),
           baseline: Optional[str] = None, figures: Sequence[Tuple[str, bytes]] = (),
           aggregate: Optional[Sequence[str]] = None, intervals: str = 'line', benchmarks: Sequence = ()) -> str:
    """The leaderboard in ``fmt``; ``baseline`` (a recipe or backbone name) adds the paired Δ against it;
    ``benchmarks`` (:class:`~vitbench.results.benchmark_record.BenchmarkRecord`) add their measured ratios beside
    the paper's (Markdown and HTML);
    ``figures`` ((title, PNG bytes) made elsewhere) are embedded in HTML and listed in Markdown. Every format
    ranks the rows across tasks (:mod:`vitbench.results.rank`) over the columns ``aggregate`` names (default: the
    downstream columns every row has): a section in Markdown and HTML, rank columns in CSV. ``intervals`` (HTML):
    a number's interval on a second line in small type ('line') or in its tooltip ('tooltip')."""
    if fmt not in FORMATS:
        raise ValueError(f'unknown leaderboard format {fmt!r}; expected one of {FORMATS}')
    from .reproduction import shown_tables
    paper = shown_tables(measured, paper)  # board.yaml's tables, and the map's others where a cell links to them
    if fmt == 'tidy':
        return render_tidy_csv(measured, paper)
    deltas = paired_deltas(measured, baseline) if baseline else None
    ranking = cross_task_rank(measured, aggregate)
    if fmt == 'csv':
        return render_csv(measured, paper, deltas, ranking)
    if fmt == 'md':
        return render_markdown(measured, paper, sources, deltas, figures, ranking, benchmarks)
    return render_html(measured, paper, sources, deltas=deltas, figures=figures, ranking=ranking, intervals=intervals,
                       benchmarks=benchmarks)


def measured_and_paper(runs: Sequence[str], paper: bool = True,
                       config_protocol: Optional[Callable[[str], Optional[dict]]] = None) -> Tuple[Table, list]:
    """The measured table of ``runs`` and the paper tables it shows (:func:`~vitbench.results.reproduction.
    shown_tables`: board.yaml's, and the map's other tables where a measured cell links to them), with the protocols
    of the configs they both name resolved by ``config_protocol`` (:func:`~vitbench.results.reproduction.
    resolve_linked`)."""
    from .paper import load_paper_tables
    from .reproduction import resolve_linked, shown_tables
    from .table import build_table
    measured = build_table(runs)
    tables = load_paper_tables() if paper else []
    if config_protocol is not None:
        resolve_linked(tables, config_protocol,
                       {c for row in measured.rows for configs in row.cell_configs.values() for c in configs})
    return measured, shown_tables(measured, tables)


def tidy_path(csv_path: str) -> str:
    """Where the tidy CSV goes beside the wide one: board.csv → board.tidy.csv."""
    return osp.splitext(csv_path)[0] + TIDY_SUFFIX


def format_of(path: str) -> str:
    """The format a file name asks for: leaderboard.md → 'md', board.tidy.csv → 'tidy'; errors name the file."""
    if path.lower().endswith(TIDY_SUFFIX):
        return 'tidy'
    ext = osp.splitext(path)[1].lstrip('.').lower()
    ext = {'markdown': 'md', 'htm': 'html'}.get(ext, ext)
    if ext not in FORMATS:
        raise ValueError(f"cannot tell the leaderboard format of '{path}' from its extension; use .md, .csv, "
                         '.tidy.csv or .html, or pass --format')
    return ext


def write_leaderboard(runs: Sequence[str], outputs: Dict[str, str], paper: bool = True,
                      baseline: Optional[str] = None, figures: Sequence[str] = (),
                      aggregate: Optional[Sequence[str]] = None,
                      config_protocol: Optional[Callable[[str], Optional[dict]]] = None,
                      intervals: str = 'line', benchmarks: Sequence[str] = ()) -> Table:
    """Build the table from the result.json files under ``runs`` and write it as ``{format: path}`` (a wide CSV
    with its tidy sibling beside it, :func:`tidy_path`, unless ``outputs`` names one)
    (atomically: a reader never sees half a page), with the paired Δ against ``baseline`` when given. Every
    page is rendered before the first is written, so a bad baseline leaves no file. ``config_protocol`` (the
    harness' reader of configs, :func:`harness.experiment.linked_protocol.config_protocol`) resolves the protocol
    of the configs paper rows link, without which no cell under a protocol links to a paper number. ``benchmarks``:
    ``tools/benchmark.py --json`` records whose ratios the page shows beside the paper's
    (:mod:`vitbench.results.benchmark_record`). Returns the measured table (its conflicts included)."""
    from .benchmark_record import read_benchmark
    records = [read_benchmark(path) for path in benchmarks]
    measured, tables = measured_and_paper(runs, paper, config_protocol)
    pngs = []
    for path in figures:
        with open(path, 'rb') as f:
            pngs.append((path, f.read()))
    outputs = dict(outputs)
    if 'csv' in outputs and 'tidy' not in outputs:
        outputs['tidy'] = tidy_path(outputs['csv'])
    pages = {path: render(fmt, measured, tables, runs, baseline, pngs, aggregate, intervals, records)
             for fmt, path in outputs.items()}
    for path, text in pages.items():
        atomic_write_text(text, path)
    return measured

