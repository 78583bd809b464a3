"""The throughput and peak-memory columns of a paper table, measured (``tools/benchmark.py paper``): each row of the
map that states a throughput (:mod:`vitbench.results.paper_speed`), its model built at its resolution and run in
inference at the paper's batch and precision; the ratios between models beside the paper's (absolute images/s depend
on the GPU, ratios between models should hold)."""
import torch

from vitbench.engine.step_meter import PeakRSS, clock_name, peak_memory_mb, synchronize, time_side_by_side


def bench_paper(args, make_step) -> tuple:
    """Each row of ``--paper-table`` that states a throughput (vitbench.results.paper_speed): its model at its
    resolution, inference (eval, inference mode) at ``--batch`` in ``--dtypes``' first precision; the rows carry
    the paper's images/s and peak MB beside the measured ones, the ratios are each row's over the reference's, as
    measured and as printed. ``make_step``: tools/benchmark.py's step of a model in a mode and precision."""
    from backbones import create_model  # the registry, filled by importing the package
    from vitbench.results.paper_speed import paper_speeds, ratios
    device, dtype = torch.device(args.device), args.dtypes[0]
    speeds = paper_speeds(args.paper_table)
    if args.paper_rows:
        wanted = [m.strip() for m in args.paper_rows.split(',') if m.strip()]
        unknown = [m for m in wanted if m not in {s.model for s in speeds}]
        if unknown:
            raise SystemExit(f'--paper-rows: {unknown} are not rows of {args.paper_table} that state a throughput; '
                             f'expected some of {", ".join(s.model for s in speeds)}')
        speeds = [s for s in speeds if s.model in wanted]
    reference = args.paper_reference or next((s.model for s in speeds if s.model.endswith('ViT-B')), speeds[0].model)
    if reference not in {s.model for s in speeds}:
        raise SystemExit(f'--paper-reference {reference!r} is not one of the rows measured: '
                         f'{", ".join(s.model for s in speeds)}')
    peak_rss = PeakRSS()
    rows, measured, memory = [], {}, {}
    for speed in speeds:
        model = create_model(speed.variant, img_size=speed.img_size).to(device)
        torch.manual_seed(0)
        x = torch.randn(args.batch_size, 3, speed.img_size, speed.img_size, device=device)
        step = make_step(model, x, None, 'fwd', dtype, device)
        fastest, median = time_side_by_side({'model': step}, args.rounds, args.iters, device, args.clock,
                                            args.warmup)['model']
        measured[speed.model] = args.batch_size / fastest
        memory[speed.model] = peak_memory_mb(step, device, peak_rss)
        rows.append(dict(model=speed.model, variant=speed.variant, img_size=speed.img_size, batch=args.batch_size,
                         dtype=dtype, mode='fwd', device=str(device), clock=clock_name(device, args.clock),
                         img_per_s=measured[speed.model], ms_per_iter=1e3 * fastest, ms_per_iter_median=1e3 * median,
                         peak_mem_mb=memory[speed.model], paper_img_per_s=speed.images_per_s,
                         paper_peak_mem_mb=speed.peak_mem_MB))
        print(f'{speed.model} ({speed.variant} at {speed.img_size}): {measured[speed.model]:.1f} im/s measured, '
              f'{speed.images_per_s:g} im/s in the paper', flush=True)
        del model, x
        synchronize(device)
        if device.type == 'cuda':
            torch.cuda.empty_cache()
    table = args.paper_table
    paper = ratios({s.model: s.images_per_s for s in speeds}, reference)
    paper_memory = ratios({s.model: s.peak_mem_MB for s in speeds}, reference)
    out = {}
    for model, ratio in ratios(measured, reference).items():
        out[f'{table}/{model}/throughput_vs_{reference}'] = ratio
        out[f'{table}/{model}/throughput_vs_{reference}/paper'] = paper[model]
    for model, ratio in ratios(memory, reference).items():
        if model in paper_memory:
            out[f'{table}/{model}/peak_mem_vs_{reference}'] = ratio
            out[f'{table}/{model}/peak_mem_vs_{reference}/paper'] = paper_memory[model]
    for row in rows:
        row.update(throughput_ratio=out.get(f'{table}/{row["model"]}/throughput_vs_{reference}'),
                   paper_throughput_ratio=paper.get(row['model']), reference=reference)
    return rows, out


