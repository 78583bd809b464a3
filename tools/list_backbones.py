#!/usr/bin/env python
"""Print the backbones a run can name: the suite's variants (name, family, shape, parameters, GFLOPs at the
variant's resolution, paper), timm's models (timm:PATTERN) and the families a module of your own registers
(--imports).

Depth N+k: N trunk blocks and k class-attention blocks (CaiT, PatchConvNet's attention-based pooling);
heads: 0 for ResMLP (no attention).

    python tools/list_backbones.py [PATTERN] [--no-flops] [--json FILE]
    python tools/list_backbones.py 'timm:*'                   # every timm model (--backbone timm:NAME takes any)
    python tools/list_backbones.py 'timm:convnext*'            # timm's, by a shell-style pattern
    python tools/list_backbones.py --imports my_family         # with the variants my_family.py registers

Parameters are counted on the meta device (instant); GFLOPs come from mmengine's FlopAnalyzer on one image
(a jit trace per variant, about a minute for all of them; --no-flops skips it).

timm's models are listed from timm's registry (timm.list_models), nothing built: their timm module, the
pretrained tags timm knows (weights are never downloaded: they must be in the local Hugging Face cache, or given
as a file), and the suite's variant of the same architecture where it has one (its own implementation, which
reads timm's weights). A module of your own that registers a family (register_family) or a timm model
(@timm.models.register_model) adds its variants or timm:NAME models to the listing when --imports
names it, as it adds them to a run (docs/extending-backbone.md).
"""
import argparse
import json

import torch

from backbones import create_model, family_record, get_variant, list_models, suite_variant_of
from backbones.complexity import count_flops, count_params
from backbones.timm_backbones import PREFIX, is_timm_name
from harness.tasks import ImportsError, import_modules
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


def timm_rows(pattern: str) -> list:
    """timm's models matching ``pattern`` (after 'timm:'), from its registry alone: name, module, pretrained tags,
    the suite's variant of the same architecture. A name with a pretrained tag (``.fb_in1k``) matches its model."""
    import timm
    pattern = pattern[len(PREFIX):]
    module_of = {model: module for module in timm.list_modules() for model in timm.list_models(module=module)}
    tags = {}
    for tagged in timm.list_pretrained():
        tags.setdefault(tagged.split('.')[0], []).append(tagged.partition('.')[2])
    names = timm.list_models(pattern.split('.')[0] if '.' in pattern else pattern)
    return [dict(name=PREFIX + name, module=module_of.get(name, '?'), pretrained=tags.get(name, []),
                 suite_variant=suite_variant_of(name)) for name in names]


def print_timm(rows: list) -> None:
    header = f'{"name":52s} {"timm module":24s} {"suite variant":32s} pretrained tags (local cache or a file)'
    print(header)
    print('-' * len(header))
    for row in rows:
        tags = ', '.join(row['pretrained'][:3]) + (f', +{len(row["pretrained"]) - 3}' if len(row['pretrained']) > 3
                                                   else '')
        print(f'{row["name"]:52s} {row["module"]:24s} {row["suite_variant"] or "-":32s} {tags or "-"}')
    print(f'{len(rows)} timm model(s); run any with --backbone NAME (e.g. {rows[0]["name"]})')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('pattern', nargs='?', default='*',
                        help="shell-style filter, e.g. 'deit3_*'; 'timm:PATTERN' lists timm's models, e.g. 'timm:*'")
    parser.add_argument('--no-flops', action='store_true', help='skip the FLOP count')
    parser.add_argument('--imports', nargs='+', action='extend', default=[], metavar='MODULE',
                        help='import these modules first (on PYTHONPATH): a family of your own (register_family) or '
                        'a timm model (@register_model), listed with the others')
    parser.add_argument('--json', help='also write the rows to this file')
    args = parser.parse_args(argv)
    try:
        import_modules(args.imports)
    except ImportsError as e:
        raise SystemExit(f'error: {e}') from None
    if is_timm_name(args.pattern):
        rows = timm_rows(args.pattern)
        if not rows:
            raise SystemExit(f'no timm model matches {args.pattern!r} (timm.list_models; a model of your own: '
                             '--imports its module)')
        print_timm(rows)
    else:
        rows = variant_rows(args.pattern, flops=not args.no_flops)
    if args.json:
        atomic_write_text(json.dumps(rows, indent=2), args.json)
    return rows


def variant_rows(pattern: str, flops: bool) -> list:
    names = list_models(pattern)
    if not names:
        import timm
        in_timm = len(timm.list_models(pattern))
        hint = f"; timm has {in_timm} model(s) matching it: list them with 'timm:{pattern}'" if in_timm else ''
        raise SystemExit(f'no variant matches {pattern!r}{hint}; variants: {", ".join(list_models())}')
    header = (f'{"name":34s} {"family":12s} {"depth":>6s} {"width":>5s} {"heads":>5s} {"patch":>5s} '
              f'{"params (M)":>10s} {"GFLOPs":>8s} {"res":>5s}  paper')
    print(header)
    print('-' * len(header))
    rows = []
    for name in names:
        row = describe(name, flops=flops)
        rows.append(row)
        gflops = '-' if row['gflops'] is None else f'{row["gflops"]:.2f}'
        print(f'{name:34s} {row["family"]:12s} {row["depth"]:>6s} {row["width"]:5d} {row["heads"]:5d} '
              f'{row["patch"]:5d} {row["params_M"]:10.2f} {gflops:>8s} {row["resolution"]:5d}  {row["paper"]}',
              flush=True)
    return rows


if __name__ == '__main__':
    main()
