#!/usr/bin/env python
"""Render how much of the seed papers vitbench reruns, from the map of the papers (vitbench/results/papers/):

    python tools/coverage.py            # writes docs/coverage.md and docs/coverage.json
    python tools/coverage.py --check    # exit 1 if either is not what the map renders (tests/test_paper_map.py)

Per document: tables whole / in part / not at all / not reproducible here, and rows recorded / runnable / linked;
then one line per table (and per figure whose numbers a user would rerun) with its state and why.
"""
import argparse
import sys
from pathlib import Path

from vitbench.results.coverage import current, to_json, to_markdown

DOCS = Path(__file__).resolve().parents[1] / 'docs'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--check', action='store_true', help='compare instead of writing; exit 1 if out of date')
    parser.add_argument('--out', default=str(DOCS), metavar='DIR', help='where coverage.md / .json go (docs/)')
    args = parser.parse_args(argv)
    entries = current()
    files = {Path(args.out) / 'coverage.md': to_markdown(entries), Path(args.out) / 'coverage.json': to_json(entries)}
    stale = [str(p) for p, text in files.items() if not p.is_file() or p.read_text(encoding='utf-8') != text]
    if args.check:
        for path in stale:
            print(f'{path} is out of date: run python tools/coverage.py', file=sys.stderr)
        return 1 if stale else 0
    for path, text in files.items():
        path.write_text(text, encoding='utf-8')
        print(f'wrote {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
