#!/usr/bin/env python
"""Tabulate every result.json under some run folders: one row per (backbone, pre-training, epochs), the best
value of each column marked, conflicting duplicate runs listed, paper reference results in their own section.

    python tools/leaderboard.py work_dirs/demo                                # Markdown on stdout
    python tools/leaderboard.py work_dirs/demo --out work_dirs/demo/leaderboard.html   # format from the name
    python tools/leaderboard.py work_dirs/a work_dirs/b --format csv --out board.csv   # + board.tidy.csv beside
    python tools/leaderboard.py work_dirs/demo --out board.html --intervals tooltip   # intervals in the tooltips
    python tools/leaderboard.py work_dirs/demo --baseline scratch                # + paired Δ vs scratch
    python tools/leaderboard.py work_dirs/demo --aggregate ade20k-demo,coco-demo_box   # rank over these columns
    python tools/leaderboard.py work_dirs/paper --check-reproduction 0.3   # exit 1 if a linked cell is off by > 0.3
    python tools/leaderboard.py work_dirs/mine --imports my_task   # a task of your own: its module registers it

A run that left per-image results (per_image.npz beside its result.json) gets a 95 % interval over its test images
(a percentile bootstrap), its Δ a paired one over the images both rows share; Markdown and HTML end with the
cross-task rank (CSV: its rank columns): mean z-score over the downstream columns every row has (or those
--aggregate names), with its interval and the probability of each rank from the same bootstrap.

Measured cells that are the same experiment as a paper row (its config, variant and epochs) show the paper's
number and Δ beside them; --check-reproduction TOL lists those whose |Δ| exceeds TOL (points) and exits 1 if any.

A CSV is wide, one line per row (every column's mean, std, n, interval); its tidy sibling, written beside it
(board.csv -> board.tidy.csv; alone: --format tidy or --out board.tidy.csv), has one line per cell and fixed fields
(source, backbone, recipe, epochs, column, ..., value, std, ci95_low, ci95_high, n, paper_value): pandas.read_csv
loads it as it is.

The HTML page shows the downstream tasks' columns first, grouped per task, then ImageNet top-1; robustness and
calibration (ImageNet-C mCE, ECE, top-1 on V2 / ReaL / A / R / Sketch) have a table of their own, folded. Each
table scrolls in its own box with its header and backbone column in view; each number's interval is on a second
line in small type (--intervals line, the default) or in its tooltip (--intervals tooltip). It sorts and filters in
the browser: click a column header to sort its table (numbers by each cell's
leading number, empty cells last), type in the box to hide the rows without that text. Its state is in the URL
fragment: leaderboard.html#sort=COLUMN&dir=desc&filter=TEXT (table=deltas, table=rank or table=paper-ID for another
table).

Exit status: 0 written; 2 when no result.json is found, an option is wrong, or a result.json is left out (each one
named; the board of the others is still written); with --check-reproduction, 1 when a cell is beyond TOL.
"""
import argparse
import sys

from harness.experiment.linked_protocol import config_protocol
from harness.tasks import load_tasks
from vitbench.results.reproduction import beyond, check_lines, match_reported
from vitbench.results.plain_text import neutralize
from vitbench.results.render import (FORMATS, INTERVALS, format_of, measured_and_paper, render, tidy_path,
                                     write_leaderboard)
from vitbench.results.table import LeaderboardError, find_results


def say(text: str, file=None) -> None:
    """A line on the terminal, names from result files made harmless (no escape sequence, no bidirectional
    override)."""
    print(neutralize(text), file=file or sys.stdout)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', metavar='RUNS', help='folders searched for result.json (or result files)')
    parser.add_argument('--format', choices=FORMATS,
                        help='md, csv, tidy (the CSV of one line per cell) or html (html embeds plots); default: from '
                        '--out (board.tidy.csv: tidy), else md')
    parser.add_argument('--out', metavar='FILE', help='write here instead of stdout')
    parser.add_argument('--intervals', choices=INTERVALS, default='line',
                        help='HTML: where a number\'s interval (and n, the paper\'s number) goes: a second line in '
                        'small type (line, the default) or the cell\'s tooltip (tooltip: one line per row)')
    parser.add_argument('--no-paper', action='store_true', help='leave out the paper reference section')
    parser.add_argument('--benchmark', action='append', default=[], metavar='JSON',
                        help='a tools/benchmark.py --json record: its ratios beside the paper\'s (repeatable; '
                        'docs/benchmarks.md, "Paper tables of speed and memory as pipeline stages")')
    parser.add_argument('--baseline', metavar='NAME',
                        help='add the paired Δ of every row against this one: a pre-training recipe (e.g. scratch: '
                        "each backbone's scratch row) or a backbone (its row of the same recipe)")
    parser.add_argument('--aggregate', type=lambda text: [k for k in text.split(',') if k], metavar='COLUMNS',
                        help='rank the rows across these columns, comma-separated keys (dataset; _box/_mask for '
                        'COCO; _EVAL for another evaluation, e.g. ade20k_ms); default: every downstream column all '
                        'rows have. The keys are listed under the rank table')
    parser.add_argument('--imports', nargs='+', action='extend', default=[], metavar='MODULE',
                        help="import these modules first: a task from outside the suite (on PYTHONPATH) registers "
                        "its record so, and its runs' result.json are tabulated with the others (the suite's own "
                        'tasks need none)')
    parser.add_argument('--check-reproduction', type=_tolerance, metavar='TOL',
                        help='instead of the leaderboard: list every measured cell linked to a paper row whose '
                        '|measured - reported| exceeds TOL points; exit status 1 if there is one')
    return parser.parse_args(argv)


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also NaN
        raise argparse.ArgumentTypeError(f'{text!r}: expected a tolerance >= 0 in points of the metric, e.g. 0.3')
    return value


def check_reproduction(runs, tolerance: float) -> int:
    """The linked cells beyond ``tolerance`` on stdout; 1 if any, else 0."""
    table, paper = measured_and_paper(runs, config_protocol=config_protocol)
    for message in table.rejected:
        say(f'error: {message}', file=sys.stderr)
    links, mismatches = match_reported(table, paper)
    for line in check_lines(links, tolerance):
        say(line)
    for mismatch in mismatches:  # same-protocol cells only are compared
        say(f'not compared: {mismatch.line()}')
    if not links:
        say(f'warning: no measured cell under {" ".join(runs)} is the same experiment as a paper row (a run of a '
              'config that vitbench/results/papers/ names, with its variant and epochs)', file=sys.stderr)
    return 2 if table.rejected else 1 if beyond(links, tolerance) else 0


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        load_tasks(args.imports)  # the records of the tasks whose result.json it reads
        if not find_results(args.runs) and not args.benchmark:  # paper rows alone would look like an answer
            say(f'error: no result.json under {" ".join(args.runs)} (expected the work dirs of runs, e.g. '
                  'work_dirs/demo, or result.json files)', file=sys.stderr)
            return 2
        if args.check_reproduction is not None:
            return check_reproduction(args.runs, args.check_reproduction)
        fmt = args.format or (format_of(args.out) if args.out else 'md')
        if args.out:
            table = write_leaderboard(args.runs, {fmt: args.out}, paper=not args.no_paper, baseline=args.baseline,
                                      aggregate=args.aggregate, config_protocol=config_protocol,
                                      intervals=args.intervals, benchmarks=args.benchmark)
        else:
            from vitbench.results.benchmark_record import read_benchmark
            records = [read_benchmark(path) for path in args.benchmark]
            table, paper = measured_and_paper(args.runs, not args.no_paper, config_protocol)
            sys.stdout.write(render(fmt, table, paper, args.runs, args.baseline, aggregate=args.aggregate,
                                    intervals=args.intervals, benchmarks=records))
    except (LeaderboardError, ValueError) as e:
        say(f'error: {e}', file=sys.stderr)
        return 2
    except OSError as e:  # the result files are read by build_table, which names them; this is --out
        say(f'error: cannot write the leaderboard to {args.out or "stdout"}: {e.strerror or e} '
              '(choose another --out)', file=sys.stderr)
        return 2
    for c in table.conflicts:
        say(f'warning: conflicting runs for {" / ".join(map(str, c.row))}, {c.column.label}: '
              + ', '.join(f'{e.value:.2f} ({e.path})' for e in c.entries), file=sys.stderr)
    if args.out:
        say(f'leaderboard: {len(table.rows)} rows, {len(table.columns)} measured columns -> {args.out}'
            + (f' and {tidy_path(args.out)}' if fmt == 'csv' else ''), file=sys.stderr)
    for message in table.warnings:
        say(f'warning: {message}', file=sys.stderr)
    for message in table.rejected:  # the board of the others is written; each file left out is named
        say(f'error: {message}', file=sys.stderr)
    return 2 if table.rejected else 0


if __name__ == '__main__':
    sys.exit(main())
