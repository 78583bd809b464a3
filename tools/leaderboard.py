#!/usr/bin/env python
"""Tabulate every result.json under some run folders: one row per (backbone, pre-training, epochs), the best
value of each column marked, conflicting duplicate runs listed, paper reference results in their own section.

    python tools/leaderboard.py work_dirs/demo                                # Markdown on stdout
    python tools/leaderboard.py work_dirs/demo --out work_dirs/demo/leaderboard.html   # format from the name
    python tools/leaderboard.py work_dirs/a work_dirs/b --format csv --out board.csv
    python tools/leaderboard.py work_dirs/demo --baseline scratch                # + paired Δ vs scratch
"""
import argparse
import sys

from vitbench.results.paper import load_paper_tables
from vitbench.results.render import FORMATS, format_of, render, write_leaderboard
from vitbench.results.table import LeaderboardError, build_table


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('runs', nargs='+', metavar='RUNS', help='folders searched for result.json (or result files)')
    parser.add_argument('--format', choices=FORMATS,
                        help='md, csv or html (html embeds plots); default: from --out, else md')
    parser.add_argument('--out', metavar='FILE', help='write here instead of stdout')
    parser.add_argument('--no-paper', action='store_true', help='leave out the paper reference section')
    parser.add_argument('--baseline', metavar='NAME',
                        help='add the paired Δ of every row against this one: a pre-training recipe (e.g. scratch: '
                        "each backbone's scratch row) or a backbone (its row of the same recipe)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        fmt = args.format or (format_of(args.out) if args.out else 'md')
        if args.out:
            table = write_leaderboard(args.runs, {fmt: args.out}, paper=not args.no_paper, baseline=args.baseline)
        else:
            table = build_table(args.runs)
            sys.stdout.write(render(fmt, table, [] if args.no_paper else load_paper_tables(), args.runs,
                                    args.baseline))
    except (LeaderboardError, ValueError) as e:
        print(f'error: {e}', file=sys.stderr)
        return 2
    except OSError as e:  # the result files are read by build_table, which names them; this is --out
        print(f'error: cannot write the leaderboard to {args.out or "stdout"}: {e.strerror or e} '
              '(choose another --out)', file=sys.stderr)
        return 2
    if not table.rows:
        print(f'warning: no result.json under {" ".join(args.runs)}', file=sys.stderr)
    for c in table.conflicts:
        print(f'warning: conflicting runs for {" / ".join(map(str, c.row))}, {c.column.label}: '
              + ', '.join(f'{e.value:.2f} ({e.path})' for e in c.entries), file=sys.stderr)
    if args.out:
        print(f'leaderboard: {len(table.rows)} rows, {len(table.columns)} measured columns -> {args.out}',
              file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
