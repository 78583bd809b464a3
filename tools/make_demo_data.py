#!/usr/bin/env python
"""Generate the embedded demo datasets, or check any dataset folder (demo or real) against its format.

    python tools/make_demo_data.py --out data/demo --scale small      # the demo (about a minute)
    python tools/make_demo_data.py --out /tmp/d --scale tiny          # what the tests use (seconds)
    python tools/make_demo_data.py --check data/demo                  # every dataset under a root, every
                                                                      # image decoded (--workers N processes)
    python tools/make_demo_data.py --check /data/coco --dataset coco  # one dataset folder, e.g. real COCO
"""
import argparse
import os
import sys
import time

from harness import demo_data


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--out', default='data/demo', help='output root (default: data/demo)')
    p.add_argument('--scale', default='small', choices=demo_data.SCALES,
                   help='tiny: a few dozen images per split, for tests; small: the demo (default)')
    p.add_argument('--seed', type=int, default=0, help='same seed, same bytes (default: 0)')
    p.add_argument('--datasets', nargs='+', metavar='NAME', choices=list(demo_data.DATASETS),
                   help=f'only these (default: all): {" ".join(demo_data.DATASETS)}')
    p.add_argument('--workers', type=int, default=min(2, os.cpu_count() or 1),
                   help='processes drawing (or with --check, decoding) images (default: up to 2); output does '
                   'not depend on it')
    p.add_argument('--check', metavar='DIR', help='check DIR instead of generating: a root holding the '
                   'datasets at their usual places (like data/demo), or with --dataset one dataset folder')
    p.add_argument('--dataset', metavar='NAME', choices=list(demo_data.DATASETS),
                   help='with --check: DIR is the data root of this one dataset (e.g. a real COCO folder)')
    return p.parse_args()


def run_check(args):
    datasets = demo_data.select([args.dataset] if args.dataset else args.datasets)
    report = demo_data.check(datasets, args.check, single=args.dataset is not None, workers=args.workers)
    for ds in datasets:
        problems = report[ds.name]
        where = args.check if args.dataset else os.path.join(args.check, ds.data_root)
        if not problems:
            print(f'ok    {ds.name:16s} {where}')
        else:
            print(f'FAIL  {ds.name:16s} {where}: {len(problems)} problem(s)\n'
                  + demo_data.format_problems(ds, problems))
    return 1 if any(report.values()) else 0


def main():
    args = parse_args()
    if args.check:
        return run_check(args)
    start = time.time()
    errors = demo_data.generate(demo_data.select(args.datasets), args.out, seed=args.seed, scale=args.scale,
                                workers=args.workers)
    for e in errors:
        print(f'error: {e}', file=sys.stderr)
    print(f'{"failed" if errors else "done"} in {time.time() - start:.1f}s: {args.out} (scale={args.scale}, '
          f'seed={args.seed}); check it with: python tools/make_demo_data.py --check {args.out}')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
