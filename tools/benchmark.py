#!/usr/bin/env python
"""Benchmarks: tools/benchmark.py SUITE [--json FILE] (the contract in docs/architecture.md).

Prints a table and, with --json, writes `{"machine": {...}, "rows": [...], "ratios": {name: float}}`.
Every ratio compares two measurements taken side by side in this process and run: after warm-up, timed rounds
alternate between the two implementations and each side's fastest round is used (the one least disturbed by
other processes); rows also report the median (`vitbench/engine/step_meter.py`).

Devices: --device cuda (the default where CUDA is available) times rounds with CUDA events and synchronises
after each, autocasts on 'cuda', and reads peak memory from the CUDA allocator; --device cpu times by the wall
clock, or by the process CPU time with --clock cpu (on a machine shared with other jobs, waiting for the CPU
then does not count; combine with --threads 1), and reads the resident-memory peak. --compile measures
`torch.compile` of both sides of every pair (backbones, pretrain; dense runs eager). MFU columns
(`vitbench/engine/mfu.py`): model FLOPs (6 x MACs per image for a training step, 2 x forward only) per second over
the dense matrix-product rate measured at the start of the run in the row's precision (`mfu`) and over the GPU's
datasheet bf16 peak (`mfu_datasheet`, bf16 rows of a known GPU); the machine record holds both rates.

Suites:
  backbones  vitbench vs timm on the same architecture with the same weights (outputs checked equal first, on
             CPU): params, GFLOPs, forward and forward+backward throughput, MFU and peak memory, fp32 and bf16
             autocast (CPU: bf16 only with bf16 instructions unless --dtypes asks for it; CUDA: bf16). Families
             timm does not have (PatchConvNet) are measured alone: the same columns, no ratio to timm (the
             thesis' Tables 5.1 / 5.2 give their throughput and peak memory, batch-256 inference on a V100).
  pretrain   training-step cost of the recipes (pretrain/benchmark.py, --pairs): MAE-B vs supervised
             ViT-B, MAE-lite Tiny vs supervised Tiny, distilled MAE vs MAE, attention-only vs full fine-tuning
             (step time, model FLOPs, MFU and peak memory).
  paper      the throughput and peak memory columns of a paper table (the map's rows that state them, e.g.
             --paper-table thesis:6.7 or thesis:6.8): each row's model at its resolution, inference at the paper's
             batch (256) and precision (mixed: fp16 autocast on CUDA), and the ratios to a reference row (ViT-B)
             beside the paper's (absolute images/s depend on the GPU; ratios between models should hold).
  parallel   "Three things" Table 4: inference latency and throughput over a batch sweep (--batches, default
             1-64) of ViT-S18x2 / ViT-B18x2 with each layer's branches fused ("par") vs one after the other
             ("seq"), and of ViT-B18x2 vs the sequential ViT-B36x1, the paper's ratios beside the measured ones
             (backbones/parallel_benchmark.py; --img-size and --parallel-depth make it fit a CPU).
  dense      a training step of the dense tasks as their configs build them, in the precision tools/train.py
             --amp chooses (downstream/benchmark.py, needs mmseg / mmdet): UperNet on vitbench's ViT-B vs the same
             UperNet on mmseg's own VisionTransformer (step time, peak memory), and a Mask R-CNN ViT-B step (by
             default on CUDA only: --dense-tasks).

A GPU run of each suite in about a minute (eager; add --compile to the first two for the compiled one):
  tools/benchmark.py backbones --models deit3_base_patch16_224 --batch 256 --modes fwd+bwd --json b.json
  tools/benchmark.py pretrain --pairs mae_b_vs_supervised_b,attn_vs_full_ft --batch 256 --json p.json
  tools/benchmark.py dense --rounds 3 --iters 3 --json d.json
  tools/benchmark.py paper --paper-table thesis:6.7 --json t67.json   (about a minute for ViT-S to ViT-H)
  tools/benchmark.py parallel --json t4.json
"""
import argparse
import datetime
import json
import os
import platform
import tempfile

import torch
import torch.nn.functional as F

from vitbench.engine.cpu import cpu_flags, cpu_name
from vitbench.engine.cpu_amp import SLOW_BF16, cpu_has_fast_bf16
from vitbench.engine.mfu import datasheet_bf16_flops, gemm_rate, mfu, train_flops
from vitbench.engine.step_meter import (CLOCKS, DTYPES, PeakRSS, autocast, clock_name, default_device, device_name,
                                        peak_memory_mb, resolve_device, synchronize, time_side_by_side)
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


DEFAULT_BATCH = {'cpu': 8, 'cuda': 128}
PAPER_BATCH = 256


def machine_info(device: torch.device) -> dict:
    import timm
    info = {'platform': platform.platform(), 'cpu': cpu_name(), 'cpu_count': os.cpu_count(),
            'torch_threads': torch.get_num_threads(),
            'simd': sorted(f for f in cpu_flags() if f.startswith(('amx', 'avx512_bf16', 'avx512f'))),
            'python': platform.python_version(), 'torch': torch.__version__, 'timm': timm.__version__,
            'device': str(device), 'device_name': device_name(device),
            'load_avg_start': os.getloadavg(), 'date': datetime.datetime.now().isoformat(timespec='seconds')}
    if device.type == 'cuda':
        info.update(cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                    gpu_memory_gb=torch.cuda.get_device_properties(device).total_memory / 2 ** 30)
    return info


def peak_rates(device: torch.device, dtypes, gemm_size=None) -> dict:
    """Measured dense matrix-product FLOP/s per dtype ('fp32' at the default matmul precision), and the
    datasheet bf16 peak (None off the known GPUs)."""
    gemm = {d: gemm_rate(device, DTYPES[d] or torch.float32, gemm_size) for d in dtypes}
    datasheet = datasheet_bf16_flops(device_name(device)) if device.type == 'cuda' else None
    print(f'{device_name(device)}: measured GEMM ' + ', '.join(f'{d} {r / 1e12:.2f} TFLOP/s' for d, r in gemm.items())
          + (f'; datasheet bf16 {datasheet / 1e12:.0f} TFLOP/s' if datasheet else ''), flush=True)
    return dict(gemm=gemm, datasheet_bf16=datasheet)


# ---------------------------------------------------------------------------------------------- backbones
def make_step(model, x, y, mode: str, dtype: str, device=None):
    """One forward (eval, inference mode) or forward + backward (train) of ``model`` under ``dtype`` autocast."""
    device = x.device if device is None else torch.device(device)
    if mode == 'fwd':
        def step():
            model.eval()
            with torch.inference_mode(), autocast(device, dtype):
                model(x)
    else:
        def step():
            model.train()
            model.zero_grad(set_to_none=True)
            with autocast(device, dtype):
                loss = F.cross_entropy(model(x).float(), y)
            loss.backward()
    return step


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
    """Same logits in fp32 on CPU (raises otherwise); the max |difference| in fp32 and under bf16 autocast."""
    with torch.inference_mode():
        a, b = ours.eval()(x), ref.eval()(x)
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5, msg=f'{name}: vitbench and timm logits differ')
        diff = {'fp32': (a - b).abs().max().item()}
        with torch.autocast('cpu', dtype=torch.bfloat16):
            diff['bf16'] = (ours(x).float() - ref(x).float()).abs().max().item()
    return diff


def _step_memory_mb(model, step, device, peak_rss):
    """Peak memory of one step that makes its gradients (none exist before it)."""
    model.zero_grad(set_to_none=True)
    return peak_memory_mb(step, device, peak_rss)


def bench_backbones(args, peaks: dict) -> tuple:
    from backbones.complexity import count_flops, count_params
    device = torch.device(args.device)
    rows, ratios = [], {}
    peak_rss = PeakRSS()
    for name in args.models:
        ours, ref = _pair(name)
        size = ours.patch_embed.img_size
        torch.manual_seed(0)
        x = torch.randn(args.batch_size, 3, *size)
        y = torch.randint(0, ours.num_classes, (args.batch_size,))
        diff = _compare_outputs(name, ours, ref, x[:2]) if ref is not None else {}
        macs = count_flops(ours, size)
        info = dict(model=name, batch=args.batch_size, img_size=list(size), params_M=count_params(ours) / 1e6,
                    gflops=macs / 1e9, device=str(device), compiled=bool(args.compile))
        print(f'{name}: ' + (f'outputs equal (max |diff| fp32 {diff["fp32"]:.1e}, bf16 {diff["bf16"]:.1e}); '
                             if ref is not None else 'no timm counterpart, measured alone; ') +
              f'{info["params_M"]:.1f} M params, {info["gflops"]:.2f} GFLOPs', flush=True)
        x, y = x.to(device), y.to(device)
        models = {'vitbench': ours} if ref is None else {'vitbench': ours, 'timm': ref}
        models = {k: m.to(device) for k, m in models.items()}
        if args.compile:
            models = {k: torch.compile(m, backend=args.compile) for k, m in models.items()}
        ips = {}
        for mode in args.modes:
            train = mode != 'fwd'
            for dtype in args.dtypes:
                steps = {impl: make_step(model, x, y, mode, dtype, device) for impl, model in models.items()}
                secs = time_side_by_side(steps, args.rounds, args.iters, device, args.clock, args.warmup)
                for impl, step in steps.items():
                    fastest, median = secs[impl]
                    ips[impl, mode, dtype] = args.batch_size / fastest
                    rows.append(dict(info, impl=impl, mode=mode, dtype=dtype, clock=clock_name(device, args.clock),
                                     ms_per_iter=1e3 * fastest, ms_per_iter_median=1e3 * median,
                                     img_per_s=ips[impl, mode, dtype],
                                     model_tflops=train_flops(macs, args.batch_size, train) / fastest / 1e12,
                                     mfu=mfu(macs, args.batch_size, fastest, peaks['gemm'].get(dtype), train),
                                     mfu_datasheet=mfu(macs, args.batch_size, fastest,
                                                       peaks['datasheet_bf16'] if dtype != 'fp32' else None, train),
                                     peak_mem_mb=_step_memory_mb(models[impl], step, device, peak_rss),
                                     max_abs_diff_vs_timm=diff.get(dtype)))
                line = f'  {mode:8s} {dtype}: vitbench {ips["vitbench", mode, dtype]:7.2f} im/s'
                if ref is not None:
                    key = f'{name}/{mode}/{dtype}/vitbench_vs_timm'
                    ratios[key] = ips['vitbench', mode, dtype] / ips['timm', mode, dtype]
                    line += f', timm {ips["timm", mode, dtype]:7.2f} im/s, ratio {ratios[key]:.3f}'
                mfu_now = rows[-len(steps)]['mfu']
                print(line + (f'; vitbench MFU {100 * mfu_now:.1f} %' if mfu_now else ''), flush=True)
            if {'fp32', 'bf16'} <= set(args.dtypes):
                ratios[f'{name}/{mode}/vitbench_bf16_vs_fp32'] = \
                    ips['vitbench', mode, 'bf16'] / ips['vitbench', mode, 'fp32']
        del ours, ref, models
        synchronize(device)
        if device.type == 'cuda':
            torch.cuda.empty_cache()
    return rows, ratios


def bench_pretrain(args, peaks: dict) -> tuple:
    from pretrain.benchmark import bench_pretrain as run
    return run(args, peaks['gemm'], peaks['datasheet_bf16'])


def bench_parallel(args, peaks: dict) -> tuple:
    from backbones.parallel_benchmark import bench_parallel as run
    return run(args)


def bench_dense(args, peaks: dict) -> tuple:
    from downstream.benchmark import bench_dense as run  # mmseg and mmdet: this suite alone needs them
    return run(args)


def bench_paper(args, peaks: dict) -> tuple:
    from backbones.paper_benchmark import bench_paper as run
    return run(args, make_step)


SUITES = {'backbones': bench_backbones, 'pretrain': bench_pretrain, 'parallel': bench_parallel,
          'dense': bench_dense, 'paper': bench_paper}


def print_table(rows):
    cols = ['model', 'impl', 'mode', 'dtype', 'batch', 'img_size', 'img_per_s', 'paper_img_per_s', 'throughput_ratio',
            'paper_throughput_ratio', 'ms_per_iter', 'ms_per_iter_median', 'mfu', 'mfu_datasheet', 'peak_mem_mb',
            'paper_peak_mem_mb', 'params_M', 'gflops', 'gmacs']
    cols = [c for c in cols if any(r.get(c) is not None for r in rows)]
    fmt = lambda v: f'{v:.2f}' if isinstance(v, float) else ('-' if v is None else str(v))  # noqa: E731
    table = [cols] + [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    for i, line in enumerate(table):
        print('  '.join(v.ljust(w) for v, w in zip(line, widths)))
        if i == 0:
            print('  '.join('-' * w for w in widths))


def parse_args(argv=None):
    from backbones.parallel_benchmark import DEFAULT_BATCHES, PAIRS as PARALLEL_PAIRS
    from pretrain.benchmark import PAIRS, parse_pairs
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('suite', choices=sorted(SUITES) + ['all'], metavar='SUITE',
                        help=f'one of {", ".join(sorted(SUITES))} (above), or all: all of them but paper (a table\'s '
                             'models at batch 256)')
    parser.add_argument('--json', help='write machine, rows and ratios to this file')
    parser.add_argument('--device', help=f"'cpu' or 'cuda[:N]' (default: {default_device()}, cuda where available)")
    parser.add_argument('--models', default=','.join(DEFAULT_MODELS), help='backbones: comma-separated variant names')
    parser.add_argument('--pairs', default=','.join(PAIRS), help='pretrain: comma-separated pairs of '
                        f'pretrain/benchmark.py (default: all, {", ".join(PAIRS)})')
    parser.add_argument('--dense-arch', default='deit3_base_patch16_224',
                        help='dense: the backbone of the UperNet and Mask R-CNN steps')
    parser.add_argument('--dense-batch', type=int, help='dense: UperNet images per step (default 8 on CUDA, 2 on '
                        'CPU); Mask R-CNN takes half')
    parser.add_argument('--dense-size', type=int, help="dense: image side (default: the configs' crops, 512 for "
                        'UperNet and 1024 for Mask R-CNN)')
    parser.add_argument('--dense-tasks', help='dense: seg,det (default on CUDA; seg alone on CPU, where a Mask R-CNN '
                        'ViT-B step takes minutes)')
    parser.add_argument('--parallel-pairs', default=','.join(PARALLEL_PAIRS),
                        help=f'parallel: comma-separated pairs (default: all, {", ".join(PARALLEL_PAIRS)})')
    parser.add_argument('--batches', default=','.join(map(str, DEFAULT_BATCHES)),
                        help='parallel: batch sizes of the sweep (default: Table 4\'s 1,2,4,...,64)')
    parser.add_argument('--img-size', type=int, default=224, help='parallel: image side (default 224)')
    parser.add_argument('--parallel-depth', type=int, help='parallel: parallel layers (default: the variants\' 18; '
                        'the sequential twin gets twice as many blocks)')
    parser.add_argument('--batch', '--batch-size', dest='batch_size', type=int,
                        help=f'backbones, pretrain: images per step (default: {DEFAULT_BATCH["cpu"]} on CPU, '
                             f'{DEFAULT_BATCH["cuda"]} on CUDA)')
    parser.add_argument('--rounds', type=int, default=5, help='timed rounds per implementation')
    parser.add_argument('--iters', type=int, default=1, help='calls per timed round')
    parser.add_argument('--warmup', type=int, help='untimed calls of each step first (default 1; 3 on CUDA or '
                        'with --compile)')
    parser.add_argument('--modes', default='fwd,fwd+bwd', help='backbones: fwd (inference), fwd+bwd (a training '
                        'step), comma-separated (default: both)')
    parser.add_argument('--dtypes', help='backbones, pretrain: fp32,bf16 (default on CPU; fp32 alone on a CPU without '
                        'bf16 instructions); bf16 on CUDA. dense: that of tools/train.py --amp')
    parser.add_argument('--compile', nargs='?', const='inductor', metavar='BACKEND',
                        help='backbones, pretrain: torch.compile both sides of every pair (backend: '
                        'inductor)')
    parser.add_argument('--gemm-size', type=int, help='side of the matrix product that measures the peak rate '
                        '(default 8192 on CUDA, 1024 on CPU)')
    parser.add_argument('--threads', type=int, help='torch intra-op threads (default: torch\'s choice)')
    parser.add_argument('--clock', choices=sorted(CLOCKS), default='wall',
                        help='CPU: time rounds by the wall clock (default) or by the process CPU time (shared '
                        'machines)')
    parser.add_argument('--profile', action='store_true', help='pretrain: also profile each step and print its '
                        'device time by kind (matmul, attention, normalization, fused, copy ...)')
    parser.add_argument('--paper-table', default='thesis:6.7', metavar='DOC:NUMBER',
                        help="paper: the map entry whose rows' throughput to measure (default thesis:6.7)")
    parser.add_argument('--paper-rows', metavar='A,B', help='paper: only these rows (the models as the table names '
                        'them, e.g. "DeiT III ViT-S,DeiT III ViT-B")')
    parser.add_argument('--paper-reference', metavar='MODEL', help='paper: the row the ratios divide by (default: '
                        'the ViT-B row, else the first)')
    parser.add_argument('--quick', action='store_true', help='--batch 2 --rounds 1: a smoke run')
    args = parser.parse_args(argv)
    try:
        args.device = str(resolve_device(args.device))
        args.pairs = parse_pairs([p for p in args.pairs.split(',') if p])
    except ValueError as e:
        parser.error(str(e))
    device_type = torch.device(args.device).type
    args.models = [m for m in args.models.split(',') if m]
    if args.dtypes is None and args.suite == 'paper':  # the thesis' "mixed precision": fp16 autocast on a V100
        args.dtypes = 'fp16' if device_type == 'cuda' else 'fp32'
    args.parallel_pairs = [p for p in args.parallel_pairs.split(',') if p]
    unknown = [p for p in args.parallel_pairs if p not in PARALLEL_PAIRS]
    if unknown:
        parser.error(f'--parallel-pairs: unknown {unknown}; expected some of {", ".join(PARALLEL_PAIRS)}')
    try:
        args.batches = [int(b) for b in args.batches.split(',') if b]
    except ValueError:
        parser.error(f'--batches: expected comma-separated integers, got {args.batches!r}')
    if args.dtypes is None:
        args.dtypes = 'bf16' if device_type == 'cuda' else ('fp32,bf16' if cpu_has_fast_bf16() else 'fp32')
        if args.dtypes == 'fp32':  # hours of emulated bf16 would measure nothing worth having
            print(f'skipping the bf16 rows: {SLOW_BF16} (--dtypes fp32,bf16 measures them anyway)', flush=True)
    args.modes, args.dtypes = args.modes.split(','), args.dtypes.split(',')
    unknown = [d for d in args.dtypes if d not in DTYPES]
    if unknown:
        parser.error(f'--dtypes: unknown {unknown}; expected some of {", ".join(DTYPES)}')
    if args.batch_size is None:  # the paper suite: the tables' batch of 256 (thesis Tables 6.7, 6.8)
        args.batch_size = PAPER_BATCH if args.suite == 'paper' else DEFAULT_BATCH[device_type]
    args.dense_batch = args.dense_batch or (8 if device_type == 'cuda' else 2)
    args.dense_tasks = (args.dense_tasks or ('seg,det' if device_type == 'cuda' else 'seg')).split(',')
    if args.warmup is None:
        args.warmup = 3 if device_type == 'cuda' or args.compile else 1
    if args.quick:
        args.batch_size, args.rounds, args.batches = 2, 1, [1, 2]
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    machine = dict(machine_info(device), clock=clock_name(device, args.clock), compile=args.compile)
    peaks = peak_rates(device, args.dtypes, args.gemm_size)
    machine.update(gemm_tflops={d: r / 1e12 for d, r in peaks['gemm'].items()},
                   datasheet_bf16_tflops=peaks['datasheet_bf16'] and peaks['datasheet_bf16'] / 1e12)
    rows, ratios = [], {}
    for suite in (sorted(set(SUITES) - {'paper'}) if args.suite == 'all' else [args.suite]):
        r, q = SUITES[suite](args, peaks)
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
