#!/usr/bin/env python
"""What pre-training teaches a ViT: the layer analyses of MAE-lite §4, on any checkpoints and an image folder.

    python tools/analyze.py all --models deit=A/backbone.pth mae=B/backbone.pth scratch=random@vit_demo_patch8_64 \\
        --images data/demo/imagenet/val --out work_dirs/analysis
    python tools/analyze.py cka | attention | fourier | residual ...     (one analysis; same options)
    python tools/analyze.py keep-blocks RUN_DIR [RUN_DIR ...] --out work_dirs/analysis [--metric top1] [--dataset D]
    python tools/analyze.py disagreement --runs convnet=RUN_DIR deit=RUN_DIR ... --out DIR [--metric top1]

--models LABEL=PATH[@ARCH]: a vitbench backbone.pth names its variant; other formats (official DeiT / MAE /
MAE-lite files, timm, mmengine checkpoints) need `@ARCH`, but a run's epoch_N.pth builds as the run's backbone.pth
beside it records; `random@ARCH` is the untrained variant.
Writes, atomically, into --out:

* `cka.json`, `cka.png` (heatmaps of every pair, each model with itself included, or of every model against
  --reference; paper Fig. 1) and `cka_diagonal.png` (CKA at the same layer);
* `attention.json`, `attention.png`: mean attention distance (pixels) and entropy (nats) per head and layer
  (Fig. 5);
* `fourier.json`, `fourier.png`: Δ log amplitude of the feature maps per layer (Fig. 3);
* `residual.json`: per block, the ratio ||g_l(x)|| / ||x|| of the attention and FFN branches to the main path
  (`tools/analyze.py residual`; CaiT Figure 4, thesis Figure 3.6), for any backbone with sequential blocks;
* `keep_blocks.json`, `keep_blocks.png`: top-1 against the number of pre-trained blocks kept, from the
  result.json of runs trained with `tools/train.py ... --checkpoint PATH --keep-blocks K` (Figs. 2 and 4);
* `disagreement.json`: for every pair of runs (and the ground truth), the fraction of test images whose top-1
  classes differ (thesis Table 3.4), from each run's per_image.npz (LABEL=RUN_DIR or LABEL=per_image.npz), also
  printed as the table; files written before predictions were stored are refused in one line.
"""
import argparse
import json
import os
import sys

import torch

from backbones.checkpoint import CheckpointError
from backbones.residual_norms import residual_ratios
from downstream.analysis import figures
from downstream.analysis.analyses import ANALYSES, run_analyses
from downstream.analysis.images import load_images
from downstream.analysis.keep_blocks import keep_blocks_series
from downstream.analysis.models import load_model, parse_model_spec
from vitbench.fileio import atomic_write_text
from vitbench.results.disagreement import as_table, disagreement_matrix


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest='analysis', required=True, metavar='ANALYSIS')  # listed below, one per line
    for name in ('all',) + ANALYSES + ('residual',):
        p = sub.add_parser(name, help='the three analyses in one pass' if name == 'all' else f'{name} only')
        p.add_argument('--models', nargs='+', required=True, metavar='LABEL=PATH[@ARCH]',
                       help='checkpoints to analyse (random@ARCH: an untrained one)')
        p.add_argument('--images', required=True, help='an ImageFolder split, e.g. data/demo/imagenet/val')
        p.add_argument('--out', required=True, help='folder for the PNG figures and JSON numbers')
        p.add_argument('--num-images', type=int, default=512,
                       help='images used, spread evenly over the sorted folder, class by class (default 512)')
        p.add_argument('--batch-size', type=int, default=64, help='images per batch (CKA: per minibatch; default 64)')
        p.add_argument('--img-size', type=int, help="input size (default: the first model's own)")
        p.add_argument('--crop-pct', type=float, default=0.875,
                       help='resize to size / crop_pct, centre-crop (default 0.875)')
        p.add_argument('--reference', help='CKA: compare every model with this one only (the paper: DeiT-Tiny)')
        p.add_argument('--seed', type=int, default=0, help='initialisation seed of random@ARCH models')
    p = sub.add_parser('keep-blocks', help='plot top-1 against the number of pre-trained blocks kept')
    p.add_argument('runs', nargs='+', help='run folders (searched for result.json) or result.json files')
    p.add_argument('--out', required=True, help='folder for keep_blocks.json and keep_blocks.png')
    p.add_argument('--metric', default='top1', help='metric of result.json to plot (default: top1)')
    p.add_argument('--dataset', nargs='+', default=(), help='only the runs on these datasets (e.g. flowers102)')
    p = sub.add_parser('disagreement', help="pairwise top-1 disagreement between runs (from their per_image.npz)")
    p.add_argument('--runs', nargs='+', required=True, metavar='LABEL=RUN_DIR',
                   help='evaluated runs (their folder or their per_image.npz), all on the same test images')
    p.add_argument('--out', required=True, help='folder for disagreement.json')
    p.add_argument('--metric', default='top1', help="the per-image evidence compared (default top1: ImageNet val)")
    p.add_argument('--no-groundtruth', action='store_true', help='leave the labels out of the table')
    return parser.parse_args(argv)


def _write_json(data: dict, path: str) -> None:
    atomic_write_text(json.dumps(data, indent=1) + '\n', path)


def run_keep_blocks(args) -> list:
    result = keep_blocks_series(args.runs, args.metric, args.dataset)
    os.makedirs(args.out, exist_ok=True)
    _write_json(result, os.path.join(args.out, 'keep_blocks.json'))
    return [os.path.join(args.out, 'keep_blocks.json'),
            figures.keep_blocks_plot(result, os.path.join(args.out, 'keep_blocks.png'))]


def run_disagreement(args) -> list:
    runs = {}
    for text in args.runs:
        label, sep, path = text.partition('=')
        if not sep or not label or not path:
            raise ValueError(f'--runs {text!r}: expected LABEL=RUN_DIR (e.g. deit=work_dirs/deit_base_in1k_300e)')
        if label in runs:
            raise ValueError(f'--runs: the label {label!r} is given twice')
        runs[label] = path
    result = disagreement_matrix(runs, args.metric, groundtruth=not args.no_groundtruth)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, 'disagreement.json')
    _write_json(result, path)
    print(as_table(result))
    return [path]


def run_residual(models, images, args, meta) -> list:
    """Per model, the mean over the images of each block's branch-to-main-path norm ratios (batch by batch)."""
    out = {}
    for m in models:
        batches = [(x.shape[0], residual_ratios(m.model, x)) for x in images.split(args.batch_size)]
        total = sum(n for n, _ in batches)
        out[m.label] = {branch: [sum(n * r[branch][i] for n, r in batches) / total
                                 for i in range(len(batches[0][1][branch]))] for branch in ('attn', 'ffn')}
    path = os.path.join(args.out, 'residual.json')
    os.makedirs(args.out, exist_ok=True)
    _write_json(dict(meta, ratio='||g_l(x)||_2 / ||x||_2 per token, averaged (CaiT Figure 4)', images=images.shape[0],
                     models_ratios=out), path)
    return [path]


def run_layers(args) -> list:
    specs = [parse_model_spec(text) for text in args.models]
    models = [load_model(label, path, arch, seed=args.seed) for label, path, arch in specs]
    size = args.img_size or int(models[0].model.patch_embed.img_size[0])
    images, _ = load_images(args.images, args.num_images, size, args.crop_pct)
    if args.analysis == 'residual':
        meta = dict(images_folder=args.images, img_size=size,
                    models={m.label: dict(checkpoint=m.source, arch=m.arch) for m in models})
        return run_residual(models, images, args, meta)
    analyses = ANALYSES if args.analysis == 'all' else (args.analysis,)
    with torch.no_grad():  # scoped: main() also runs inside other programs (tests); autograd stays theirs
        results = run_analyses(models, images, analyses, args.batch_size, args.reference)
    os.makedirs(args.out, exist_ok=True)
    meta = dict(images_folder=args.images, img_size=size,
                models={m.label: dict(checkpoint=m.source, arch=m.arch) for m in models})
    written = []
    for name, result in results.items():
        path = os.path.join(args.out, f'{name}.json')
        _write_json(dict(meta, **result), path)
        written.append(path)
    if 'cka' in results:
        written.append(figures.cka_heatmaps(results['cka'], os.path.join(args.out, 'cka.png')))
        written.append(figures.cka_diagonals(results['cka'], os.path.join(args.out, 'cka_diagonal.png')))
    if 'attention' in results:
        written.append(figures.attention_scatter(results['attention'], os.path.join(args.out, 'attention.png')))
    if 'fourier' in results:
        written.append(figures.fourier_delta(results['fourier'], os.path.join(args.out, 'fourier.png')))
    return written


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        run = dict(zip(('keep-blocks', 'disagreement'), (run_keep_blocks, run_disagreement))).get(args.analysis,
                                                                                                  run_layers)
        written = run(args)
    except (ValueError, KeyError, OSError, CheckpointError) as e:
        message = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f'analyze.py {args.analysis}: {message}', file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
