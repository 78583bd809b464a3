#!/usr/bin/env python
"""Convert a backbone checkpoint (any format backbones.load_checkpoint reads) to vitbench's own format.

    python tools/convert_checkpoint.py SRC DST [--arch NAME [--override KEY=VALUE ...] [--num-classes N]]
                                              [--trust-pickle]

With --arch the weights are loaded into `create_model(NAME, **overrides)` with every check (and the
position embedding resized to its img_size), and that model is written: `create_model(NAME,
checkpoint=DST, **file['overrides'])` rebuilds it exactly. Without it, the keys are only renamed to
vitbench's names (official DeiT III / CaiT / parallel / MAE / MAE-lite -> timm names), and --override and
--num-classes have nothing to apply to.

--trust-pickle reads SRC with `weights_only=False`: needed for full training checkpoints that pickle
Python objects (e.g. `argparse.Namespace` under 'args'). Only use it on files from a source you trust.
"""
import argparse
import ast
import contextlib
import os
import sys

from backbones import CheckpointError, create_model, family_of, load_checkpoint, save_checkpoint
from backbones.checkpoint import FORMAT_TAG, read_checkpoint, to_canonical
from backbones.checkpoint.io import FORMAT_VERSION
from vitbench.engine.checkpoint_policy import install_checkpoint_policy
from vitbench.fileio import atomic_open


def _parse_override(text: str):
    key, sep, value = text.partition('=')
    if not sep or not key:
        raise argparse.ArgumentTypeError(f'--override expects KEY=VALUE, got {text!r}')
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value  # a bare string such as global_pool=avg


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('src', help='checkpoint to convert')
    parser.add_argument('dst', help='output file (vitbench backbone format)')
    parser.add_argument('--arch', help='named variant to load the weights into (checked, exact rebuild)')
    parser.add_argument('--override', type=_parse_override, action='append', default=[], metavar='KEY=VALUE',
                        help='with --arch: create_model keyword override, e.g. img_size=384 or global_pool=avg '
                        '(repeat it for several)')
    parser.add_argument('--num-classes', type=int,
                        help="with --arch: classifier size (default: the checkpoint's head, 0 when it has none)")
    parser.add_argument('--trust-pickle', action='store_true',
                        help='unpickle arbitrary Python objects in SRC (trusted files only)')
    return parser.parse_args(argv)


def main(argv=None):
    install_checkpoint_policy()  # mmengine runner checkpoints (numpy in the message hub) load safely
    args = parse_args(argv)
    if args.arch is not None:
        try:
            family_of(args.arch)  # an unknown name: one line with the closest valid ones, before any reading
        except KeyError as e:
            print(f'error: --arch: {e.args[0]}', file=sys.stderr)
            raise SystemExit(2) from None
    if args.trust_pickle:
        print(f'warning: reading {args.src} with weights_only=False (--trust-pickle)', file=sys.stderr)
    canonical = to_canonical(read_checkpoint(args.src, trust_pickle=args.trust_pickle), args.src)
    head = canonical.state_dict.get('head.weight')
    if args.arch is None:
        import torch
        obj = {FORMAT_TAG: FORMAT_VERSION, 'arch': None, 'overrides': {},
               'meta': dict(canonical.meta, source=canonical.source, converted_from=os.path.abspath(args.src)),
               'state_dict': canonical.state_dict}
        with _writing(args.dst), atomic_open(args.dst) as f:
            torch.save(obj, f)
        print(f'{args.src} ({canonical.source}) -> {args.dst}: keys renamed, no model check (pass --arch)')
        return args.dst

    overrides = dict(args.override)
    overrides['num_classes'] = args.num_classes if args.num_classes is not None else \
        (head.shape[0] if head is not None else 0)
    model = create_model(args.arch, **overrides)
    # read again through the loader, which applies its checks (weights_only unless trusted)
    if args.trust_pickle:
        import tempfile
        import torch
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, 'weights.pth')
            torch.save({'model': canonical.state_dict}, plain)
            report = load_checkpoint(model, plain)
    else:
        report = load_checkpoint(model, args.src)
    with _writing(args.dst):
        save_checkpoint(args.dst, model, arch=args.arch, overrides=overrides,
                        meta={'source': canonical.source, 'converted_from': os.path.abspath(args.src),
                              'notes': report.notes})
    print(f'{args.src} ({canonical.source}) -> {args.dst} as {args.arch} {overrides}')
    return args.dst


@contextlib.contextmanager
def _writing(dst: str):
    """A failed write (no such folder, not writable, disk full) as an error naming DST."""
    try:
        yield
    except OSError as e:
        raise OSError(f'cannot write {dst}: {e.strerror or e} (choose another DST)') from None


def cli(argv=None) -> int:
    """``main``, with a checkpoint that cannot be read or an output that cannot be written as one line and exit
    status 2."""
    try:
        main(argv)
    except (CheckpointError, OSError) as e:
        print(f'error: {e}', file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(cli())
