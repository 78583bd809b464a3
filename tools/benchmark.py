#!/usr/bin/env python
"""Benchmarks: ``tools/benchmark.py SUITE [--json FILE]`` (the contract in docs/architecture.md).

Prints a table and, with ``--json``, writes ``{"machine": {...}, "rows": [...], "ratios": {name: float}}``.
Every ratio compares two measurements taken side by side in this process and run: timed rounds alternate
between the two implementations and each side's fastest round is used (the one least disturbed by other
processes); rows also report the median. ``--clock cpu`` times rounds by the process CPU time instead of the
wall clock: on a machine shared with other jobs, waiting for the CPU then does not count (combine with
``--threads 1``, where no thread waits for a descheduled sibling either).

Suites:
  backbones  vitbench vs timm on the same architecture with the same weights (outputs checked equal first):
             params, GFLOPs, forward and forward+backward throughput and peak memory, fp32 and bf16 autocast
             (bf16 only on CPUs with bf16 instructions unless --dtypes asks for it). Families timm does not
             have (PatchConvNet) are measured alone: the same columns, no ratio to timm (the thesis' Tables 5.1
             / 5.2 give their throughput and peak memory, batch-256 inference on a V100).
  pretrain   training-step cost of the recipes (pretrain/benchmark.py): MAE vs supervised, distilled MAE vs
             MAE, attention-only vs full fine-tuning (step time and peak memory).
"""
import argparse
import ctypes
import datetime
import functools
import json
import os
import platform
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

from vitbench.engine.cpu import cpu_flags, cpu_name
from vitbench.engine.cpu_amp import SLOW_BF16, cpu_has_fast_bf16
from vitbench.fileio import atomic_write_text

# vitbench variant -> timm model (and arguments) of the same architecture
TIMM_MODELS = {name: (name, {}) for name in (
    'deit_tiny_patch16_224', 'deit_small_patch16_224', 'deit_base_patch16_224', 'deit_base_distilled_patch16_224',
    'deit3_small_patch16_224', 'deit3_medium_patch16_224', 'deit3_base_patch16_224', 'deit3_large_patch16_224',
    'cait_xxs24_224', 'cait_xxs36_224', 'cait_s24_224')}
TIMM_MODELS.update({
    'vit_tiny12h_patch16_224': ('vit_tiny_patch16_224', dict(num_heads=12)),
    'deit3_small_patch16_18x2': ('vit_small_patch16_18x2_224', dict(no_embed_class=True, init_values=1e-4)),
    'vit_demo_patch8_64': ('vit_tiny_patch16_224', dict(img_size=64, patch_size=8, depth=6)),
    'resmlp_12': ('resmlp_12_224', {}), 'resmlp_24': ('resmlp_24_224', {}), 'resmlp_36': ('resmlp_36_224', {}),
    'resmlp_b24': ('resmlp_big_24_224', {}),  # (timm's resmlp_* fix their shapes: no demo-sized counterpart)
})
DEFAULT_MODELS = ['deit3_small_patch16_224', 'deit3_base_patch16_224', 'cait_xxs24_224', 'resmlp_24',
                  'patchconvnet_s60']
# LayerScale parameters of timm's models, whose tiny inits (1e-5, 1e-6) would make the blocks near-identities
_TIMM_LAYER_SCALE = ('gamma', 'gamma_1', 'gamma_2', 'ls1', 'ls2')


def machine_info() -> dict:
    flags = cpu_flags()
    import timm
    return {'platform': platform.platform(), 'cpu': cpu_name(), 'cpu_count': os.cpu_count(),
            'torch_threads': torch.get_num_threads(),
            'simd': sorted(f for f in flags if f.startswith(('amx', 'avx512_bf16', 'avx512f'))),
            'python': platform.python_version(), 'torch': torch.__version__, 'timm': timm.__version__,
            'load_avg_start': os.getloadavg(), 'date': datetime.datetime.now().isoformat(timespec='seconds')}


# ---------------------------------------------------------------------------------------------- measuring
class PeakRSS:
    """Peak resident-memory increase of the process during a call (Linux: VmHWM reset through
    /proc/self/clear_refs, after returning freed heap to the OS with malloc_trim). None elsewhere."""

    def __init__(self):
        try:
            self.libc = ctypes.CDLL('libc.so.6')
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            self.ok = True
        except OSError:
            self.ok = False

    @staticmethod
    def _status(key):
        for line in open('/proc/self/status'):
            if line.startswith(key):
                return int(line.split()[1]) * 1024

    def __call__(self, fn):
        if not self.ok:
            return None
        self.libc.malloc_trim(0)
        with open('/proc/self/clear_refs', 'w') as f:
            f.write('5')
        base = self._status('VmRSS:')
        fn()
        return (self._status('VmHWM:') - base) / 2 ** 20


CLOCKS = {'wall': time.perf_counter, 'cpu': time.process_time}


def time_side_by_side(fns: dict, rounds: int, iters: int, clock=time.perf_counter) -> dict:
    """{name: (fastest, median) seconds per call}; rounds alternate the order of the implementations."""
    for fn in fns.values():  # warm-up (allocator, kernels, autograd graph)
        fn()
    times = {k: [] for k in fns}
    keys = list(fns)
    for r in range(rounds):
        for k in (keys if r % 2 == 0 else keys[::-1]):
            t = clock()
            for _ in range(iters):
                fns[k]()
            times[k].append((clock() - t) / iters)
    return {k: (min(v), statistics.median(v)) for k, v in times.items()}


def make_step(model, x, y, mode: str, dtype: str):
    autocast = torch.autocast('cpu', dtype=torch.bfloat16, enabled=dtype == 'bf16')
    if mode == 'fwd':
        def step():
            model.eval()
            with torch.inference_mode(), autocast:
                model(x)
    else:
        def step():
            model.train()
            model.zero_grad(set_to_none=True)
            with autocast:
                loss = F.cross_entropy(model(x).float(), y)
            loss.backward()
    return step


# ---------------------------------------------------------------------------------------------- backbones
def _pair(name: str):
    """timm's model (random init, no download) and vitbench's with its weights, through the loader; timm's is
    None for a family timm does not have (vitbench's then keeps its own initialisation)."""
    import timm
    from backbones import create_model, get_variant, load_checkpoint
    if name not in TIMM_MODELS:
        get_variant(name)  # an unknown name lists the valid ones
        return create_model(name), None
    timm_name, timm_kwargs = TIMM_MODELS[name]
    ref = timm.create_model(timm_name, pretrained=False, **timm_kwargs)
    with torch.no_grad():
        for n, p in ref.named_parameters():
            if n.split('.')[-1] in _TIMM_LAYER_SCALE:
                p.uniform_(0.05, 0.5)
    ours = create_model(name)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'timm.pth')
        torch.save(ref.state_dict(), path)
        load_checkpoint(ours, path, verbose=False)
    return ours, ref


def _compare_outputs(name, ours, ref, x) -> dict:
    """Same logits in fp32 (raises otherwise); the max |difference| in fp32 and under bf16 autocast."""
    with torch.inference_mode():
        a, b = ours.eval()(x), ref.eval()(x)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5, msg=f'{name}: vitbench and timm logits differ')
        diff = {'fp32': (a - b).abs().max().item()}
        with torch.autocast('cpu', dtype=torch.bfloat16):
            diff['bf16'] = (ours(x).float() - ref(x).float()).abs().max().item()
    return diff


def bench_backbones(args) -> tuple:
    from backbones.complexity import count_flops, count_params
    rows, ratios = [], {}
    peak_rss = PeakRSS()
    for name in args.models:
        ours, ref = _pair(name)
        size = ours.patch_embed.img_size
        torch.manual_seed(0)
        x = torch.randn(args.batch_size, 3, *size)
        y = torch.randint(0, ours.num_classes, (args.batch_size,))
        diff = _compare_outputs(name, ours, ref, x[:2]) if ref is not None else {}
        info = dict(model=name, batch=args.batch_size, img_size=list(size), params_M=count_params(ours) / 1e6,
                    gflops=count_flops(ours, size) / 1e9)
        print(f'{name}: ' + (f'outputs equal (max |diff| fp32 {diff["fp32"]:.1e}, bf16 {diff["bf16"]:.1e}); '
                             if ref is not None else 'no timm counterpart, measured alone; ') +
              f'{info["params_M"]:.1f} M params, {info["gflops"]:.2f} GFLOPs', flush=True)
        impls = {'vitbench': ours} if ref is None else {'vitbench': ours, 'timm': ref}
        ips = {}
        for mode in args.modes:
            for dtype in args.dtypes:
                steps = {impl: make_step(model, x, y, mode, dtype) for impl, model in impls.items()}
                secs = time_side_by_side(steps, args.rounds, args.iters, CLOCKS[args.clock])
                for impl, step in steps.items():
                    fastest, median = secs[impl]
                    ips[impl, mode, dtype] = args.batch_size / fastest
                    rows.append(dict(info, impl=impl, mode=mode, dtype=dtype, clock=args.clock,
                                     ms_per_iter=1e3 * fastest, ms_per_iter_median=1e3 * median,
                                     img_per_s=ips[impl, mode, dtype],
                                     peak_mem_mb=peak_rss(step), max_abs_diff_vs_timm=diff.get(dtype)))
                line = f'  {mode:8s} {dtype}: vitbench {ips["vitbench", mode, dtype]:7.2f} im/s'
                if ref is not None:
                    key = f'{name}/{mode}/{dtype}/vitbench_vs_timm'
                    ratios[key] = ips['vitbench', mode, dtype] / ips['timm', mode, dtype]
                    line += f', timm {ips["timm", mode, dtype]:7.2f} im/s, ratio {ratios[key]:.3f}'
                print(line, flush=True)
            if {'fp32', 'bf16'} <= set(args.dtypes):
                ratios[f'{name}/{mode}/vitbench_bf16_vs_fp32'] = \
                    ips['vitbench', mode, 'bf16'] / ips['vitbench', mode, 'fp32']
        del ours, ref
    return rows, ratios


def bench_pretrain(args) -> tuple:
    from pretrain.benchmark import bench_pretrain as run
    return run(args, functools.partial(time_side_by_side, clock=CLOCKS[args.clock]), PeakRSS())


SUITES = {'backbones': bench_backbones, 'pretrain': bench_pretrain}


def print_table(rows):
    cols = ['model', 'impl', 'mode', 'dtype', 'batch', 'img_per_s', 'ms_per_iter', 'ms_per_iter_median',
            'peak_mem_mb', 'params_M', 'gflops']
    fmt = lambda v: f'{v:.2f}' if isinstance(v, float) else ('-' if v is None else str(v))  # noqa: E731
    table = [cols] + [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    for i, line in enumerate(table):
        print('  '.join(v.ljust(w) for v, w in zip(line, widths)))
        if i == 0:
            print('  '.join('-' * w for w in widths))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument('suite', choices=sorted(SUITES) + ['all'])
    parser.add_argument('--json', help='write machine, rows and ratios to this file')
    parser.add_argument('--models', default=','.join(DEFAULT_MODELS), help='comma-separated variant names')
    parser.add_argument('--batch-size', type=int, default=8)
    parser.add_argument('--rounds', type=int, default=5, help='timed rounds per implementation')
    parser.add_argument('--iters', type=int, default=1, help='calls per timed round')
    parser.add_argument('--modes', default='fwd,fwd+bwd')
    parser.add_argument('--dtypes', help='fp32,bf16 (default; fp32 alone on a CPU without bf16 instructions)')
    parser.add_argument('--threads', type=int, help='torch intra-op threads (default: torch\'s choice)')
    parser.add_argument('--clock', choices=sorted(CLOCKS), default='wall',
                        help='time rounds by the wall clock or by the process CPU time (shared machines)')
    parser.add_argument('--quick', action='store_true', help='batch 2, one round: a smoke run')
    args = parser.parse_args(argv)
    args.models = [m for m in args.models.split(',') if m]
    if args.dtypes is None:
        args.dtypes = 'fp32,bf16' if cpu_has_fast_bf16() else 'fp32'
        if args.dtypes == 'fp32':  # hours of emulated bf16 would measure nothing worth having
            print(f'skipping the bf16 rows: {SLOW_BF16} (--dtypes fp32,bf16 measures them anyway)', flush=True)
    args.modes, args.dtypes = args.modes.split(','), args.dtypes.split(',')
    if args.quick:
        args.batch_size, args.rounds = 2, 1
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    machine = dict(machine_info(), clock=args.clock)
    rows, ratios = [], {}
    for suite in (sorted(SUITES) if args.suite == 'all' else [args.suite]):
        r, q = SUITES[suite](args)
        rows += [dict(row, suite=suite) for row in r]
        ratios.update(q)
    machine['load_avg_end'] = os.getloadavg()
    print()
    print_table(rows)
    print()
    for k, v in ratios.items():
        print(f'{k:55s} {v:.3f}')
    if args.json:
        atomic_write_text(json.dumps({'machine': machine, 'rows': rows, 'ratios': ratios}, indent=2), args.json)
        print(f'wrote {args.json}')
    return rows, ratios


if __name__ == '__main__':
    main()
