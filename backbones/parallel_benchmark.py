"""The ``parallel`` suite of ``tools/benchmark.py``: "Three things" Table 4, inference throughput of parallel ViTs
over a batch sweep (1-64 by default), in pairs timed side by side (``vitbench/engine/step_meter.py``).

* ``s18x2_par_vs_seq`` / ``b18x2_par_vs_seq``: ViT-S18x2 / ViT-B18x2 with the branches of each layer run as one
  wider operation (``fuse_parallel=True``: the paper's "par") vs one after the other (the paper's "seq"), the
  same weights. The paper's ratio par / seq (V100, its Table 4) is printed beside the measured one.
* ``b18x2_vs_b36x1``: the parallel ViT-B18x2 (fused) vs the sequential ViT-B36x1 of the same parameters and
  FLOPs (Table 3's pair); the paper gives no throughput of B36x1, so no paper ratio.

A row is a forward pass of the trunk (``forward_features``: patch stem and blocks, every token through every
block) in eval / inference mode at one batch size: latency (ms per batch, fastest and median
round) and throughput (images/s). Ratios ``parallel/<pair>/<dtype>/b<batch>`` = throughput(first) /
throughput(second), and ``.../paper`` where the paper has one. ``--img-size`` and ``--parallel-depth`` shrink the
models for a CPU (the sequential twin gets k times the depth); both sides of a pair always have the same size.
"""
from typing import Dict, Optional, Tuple

import torch

from vitbench.engine.step_meter import autocast, synchronize, time_side_by_side

# Table 4 (V100, im/s): batch -> (seq, par)
PAPER_TABLE4 = {
    'S18x2': {1: (44, 61), 2: (84, 123), 4: (168, 245), 8: (334, 474), 16: (569, 518), 32: (616, 556),
              64: (647, 575)},
    'B18x2': {1: (42, 61), 2: (80, 117), 4: (155, 187), 8: (230, 211), 16: (266, 231), 32: (276, 245),
              64: (286, 248)},
}

# pair -> ((name, variant, overrides), (name, variant, overrides), Table 4 column or None)
PAIRS: Dict[str, Tuple[tuple, tuple, Optional[str]]] = {
    's18x2_par_vs_seq': (('par', 'deit3_small_patch16_18x2', {}),
                         ('seq', 'deit3_small_patch16_18x2', dict(fuse_parallel=False)), 'S18x2'),
    'b18x2_par_vs_seq': (('par', 'deit3_base_patch16_18x2', {}),
                         ('seq', 'deit3_base_patch16_18x2', dict(fuse_parallel=False)), 'B18x2'),
    'b18x2_vs_b36x1': (('B18x2', 'deit3_base_patch16_18x2', {}), ('B36x1', 'deit3_base_patch16_36', {}), None),
}
DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32, 64)


def paper_ratio(column: Optional[str], batch: int) -> Optional[float]:
    """Table 4's par / seq throughput at ``batch`` (None where the paper has no such number)."""
    if column is None or batch not in PAPER_TABLE4[column]:
        return None
    seq, par = PAPER_TABLE4[column][batch]
    return par / seq


def _build(variant: str, overrides: dict, img_size: int, depth: Optional[int], device):
    from backbones import create_model
    from backbones.factory import variant_kwargs
    kwargs = dict(overrides, img_size=img_size)
    if depth is not None:  # parallel layers; the sequential twin has num_parallel times as many blocks
        kwargs['depth'] = depth * (2 if variant_kwargs(variant).get('num_parallel', 1) == 1 else 1)
    torch.manual_seed(0)
    return create_model(variant, **kwargs).to(device).eval()


def _forward(model, x, device, dtype):
    # the trunk, every token through every block: the classifier's forward updates only the class token in its
    # last block, which would favour the model with fewer, wider layers by a share that grows as --parallel-depth
    # shrinks (one pair of two in a 2-layer x2 model, one of four in its 4-block twin)
    def step():
        with torch.inference_mode(), autocast(device, dtype):
            model.forward_features(x)
    return step


def bench_parallel(args) -> tuple:
    device = torch.device(args.device)
    rows, ratios = [], {}
    for pair in args.parallel_pairs:
        (a_name, a_var, a_kw), (b_name, b_var, b_kw), column = PAIRS[pair]
        models = {a_name: _build(a_var, a_kw, args.img_size, args.parallel_depth, device),
                  b_name: _build(b_var, b_kw, args.img_size, args.parallel_depth, device)}
        if a_var == b_var:  # the same weights on both sides: the outputs must agree before timing them
            models[b_name].load_state_dict(models[a_name].state_dict())
            x = torch.randn(2, 3, args.img_size, args.img_size, device=device)
            with torch.inference_mode():
                torch.testing.assert_close(models[a_name](x), models[b_name](x), rtol=1e-4, atol=1e-4,
                                           msg=f'{pair}: fused and sequential outputs differ')
        for dtype in args.dtypes:
            for batch in args.batches:
                x = torch.randn(batch, 3, args.img_size, args.img_size, device=device)
                steps = {k: _forward(m, x, device, dtype) for k, m in models.items()}
                secs = time_side_by_side(steps, args.rounds, args.iters, device, args.clock, args.warmup)
                ips = {k: batch / secs[k][0] for k in steps}
                for k in steps:
                    rows.append(dict(model=f'{pair}:{k}', impl=k, mode='fwd', dtype=dtype, batch=batch,
                                     img_size=args.img_size, device=str(device),
                                     ms_per_iter=1e3 * secs[k][0], ms_per_iter_median=1e3 * secs[k][1],
                                     img_per_s=ips[k], img_per_s_median=batch / secs[k][1]))
                key = f'parallel/{pair}/{dtype}/b{batch}'
                ratios[key] = ips[a_name] / ips[b_name]
                ratios[key + '/median'] = secs[b_name][1] / secs[a_name][1]
                paper = paper_ratio(column, batch)
                if paper is not None:
                    ratios[key + '/paper'] = paper
                print(f'  {pair} {dtype} batch {batch:3d}: {a_name} {ips[a_name]:8.1f} im/s, {b_name} '
                      f'{ips[b_name]:8.1f} im/s, ratio {ratios[key]:.2f} (median {ratios[key + "/median"]:.2f})'
                      + (f'; paper {paper:.2f}' if paper is not None else ''), flush=True)
        del models
        synchronize(device)
    return rows, ratios
