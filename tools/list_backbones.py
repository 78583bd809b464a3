#!/usr/bin/env python
"""Print the named backbone variants: name, family, shape, parameters, GFLOPs at the variant's resolution, paper.

Depth N+k: N trunk blocks and k class-attention blocks (CaiT, PatchConvNet's attention-based pooling);
heads: 0 for ResMLP (no attention).

    python tools/list_backbones.py [PATTERN] [--no-flops] [--json FILE]

Parameters are counted on the meta device (instant); GFLOPs come from mmengine's FlopAnalyzer on one image
(a jit trace per variant, about a minute for all of them; --no-flops skips it).
"""
import argparse
import json

import torch

from backbones import create_model, family_record, get_variant, list_models
from backbones.complexity import count_flops, count_params
from vitbench.fileio import atomic_write_text


def describe(name: str, flops: bool = True) -> dict:
    entry = get_variant(name)
    with torch.device('meta'):
        model = create_model(name)
    kw = entry['kwargs']
    depth = f"{kw['depth']}x{kw['num_parallel']}" if kw.get('num_parallel', 1) > 1 else str(kw['depth'])
    class_attention = model.num_layers - model.depth  # CaiT's and PatchConvNet's class-attention blocks
    if class_attention:
        depth += f'+{class_attention}'
    # attention heads: of the blocks (ViT, CaiT), of the attention-based pooling (PatchConvNet), none (ResMLP)
    heads = kw.get('num_heads', model.attention_heads(model.depth) if class_attention else 0)
    row = dict(name=name, family=family_record(name).title, depth=depth, width=kw['embed_dim'], heads=heads,
               patch=kw['patch_size'], params_M=round(count_params(model) / 1e6, 2),
               resolution=model.patch_embed.img_size[0], gflops=None, paper=entry['paper'])
    if flops:
        # FLOPs do not depend on the values: allocate without the (slow) random initialisation
        model = model.to_empty(device='cpu')
        with torch.no_grad():
            row['gflops'] = round(count_flops(model, model.patch_embed.img_size) / 1e9, 2)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('pattern', nargs='?', default='*', help="shell-style filter, e.g. 'deit3_*'")
    parser.add_argument('--no-flops', action='store_true', help='skip the FLOP count')
    parser.add_argument('--json', help='also write the rows to this file')
    args = parser.parse_args(argv)
    names = list_models(args.pattern)
    if not names:
        raise SystemExit(f'no variant matches {args.pattern!r}; variants: {", ".join(list_models())}')
    header = (f'{"name":34s} {"family":12s} {"depth":>6s} {"width":>5s} {"heads":>5s} {"patch":>5s} '
              f'{"params (M)":>10s} {"GFLOPs":>8s} {"res":>5s}  paper')
    print(header)
    print('-' * len(header))
    rows = []
    for name in names:
        row = describe(name, flops=not args.no_flops)
        rows.append(row)
        gflops = '-' if row['gflops'] is None else f'{row["gflops"]:.2f}'
        print(f'{name:34s} {row["family"]:12s} {row["depth"]:>6s} {row["width"]:5d} {row["heads"]:5d} '
              f'{row["patch"]:5d} {row["params_M"]:10.2f} {gflops:>8s} {row["resolution"]:5d}  {row["paper"]}',
              flush=True)
    if args.json:
        atomic_write_text(json.dumps(rows, indent=2), args.json)
    return rows


if __name__ == '__main__':
    main()
