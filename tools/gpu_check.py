#!/usr/bin/env python
"""The GPU check: what a GPU machine must show, in one command and about 10 minutes on one H100 / H200 (16 cores).

    python tools/gpu_check.py [--out work_dirs/gpu_check] [--steps env,bench_backbones,...] [--budget 600]
    make gpu-check

Steps, each a command of the suite with its own time limit, its log in OUT/STEP.log:
  env                        tools/env_check.py: versions, the GPU, mmcv's CUDA ops running there
  bench_backbones(_compiled) tools/benchmark.py backbones: vitbench vs timm, fwd+bwd, bf16, MFU (eager, --compile)
  bench_pretrain(_compiled)  tools/benchmark.py pretrain: MAE-B vs supervised ViT-B, distilled MAE, MAE-lite Tiny,
                             attention-only vs full fine-tuning, each step's device time by kind (eager; compiled:
                             MAE-B vs supervised ViT-B and attention-only vs full fine-tuning only)
  bench_dense                tools/benchmark.py dense: an UperNet ViT-B step with --amp beside mmseg's own ViT in
                             the same UperNet, and a Mask R-CNN ViT-B step with --amp (mmcv's CUDA ops)
  demo                       tools/pipeline.py configs/pipelines/demo.py --jobs 8: the whole demo, its stages side by
                             side on the GPU, and its expected orderings
  train                      tools/train.py configs/demo/sup_demo.py --amp --compile: one epoch, its result.json
Writes OUT/gpu_check.json ({machine, steps: [{name, status, seconds, command, log}], ratios, demo}) and
OUT/gpu_check.md after every step, so that a check stopped half-way still reports what it measured; a check run in
parts (--steps) into one OUT reports every part. A step that would start after --budget seconds is skipped, and
said so (the first always runs). Exit status: 0 every step of the report passed and none was skipped, 1 otherwise.
"""
import argparse
import json
import os
import os.path as osp
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import List

from vitbench.engine.kernel_profile import format_breakdown  # torch only; the installed suite, as every tool

REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
PY = sys.executable


@dataclass
class Step:
    name: str
    argv: List[str]
    timeout: int  # seconds (a benchmark step writes OUT/NAME.json)


def steps(out: str) -> List[Step]:
    bench = [PY, 'tools/benchmark.py']

    def bench_step(name, suite, timeout, *extra):
        return Step(name, bench + [suite, '--json', f'{out}/{name}.json', *extra], timeout)

    # wall time on one H200, building and compiling included: 25 s, 53 s, 93 s, 126 s (with mmcv compiling beside them)
    backbones = ['--models', 'deit3_base_patch16_224', '--batch', '256', '--modes', 'fwd+bwd']
    pretrain = ['--batch', '256', '--profile']  # each step's device time by kind, too
    compiled_pairs = ['--pairs', 'mae_b_vs_supervised_b,attn_vs_full_ft']
    # one epoch of the demo's supervised pre-training (40 steps), compiled, in bf16: 33-40 s on an H200
    train_options = ['train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'experiment.pretrain.epochs=1']
    return [
        Step('env', [PY, 'tools/env_check.py'], 120),
        bench_step('bench_backbones', 'backbones', 120, *backbones),
        bench_step('bench_backbones_compiled', 'backbones', 200, *backbones, '--compile'),
        bench_step('bench_pretrain', 'pretrain', 120, *pretrain),
        bench_step('bench_pretrain_compiled', 'pretrain', 240, *pretrain, *compiled_pairs, '--compile'),
        bench_step('bench_dense', 'dense', 180, '--rounds', '3', '--iters', '3'),
        # on an H200 with --jobs 8: its 17 stages without Mask R-CNN 1 min 52 s, the four Mask R-CNN ones 64 s side by
        # side; it makes data/demo, which the train step reads
        Step('demo', [PY, 'tools/pipeline.py', 'configs/pipelines/demo.py', '--work-dir', f'{out}/demo',
                      '--jobs', '8'], 420),
        Step('train', [PY, 'tools/train.py', 'configs/demo/sup_demo.py', '--amp', '--compile', '--work-dir',
                       f'{out}/train', '--cfg-options', *train_options], 180),
    ]


def machine() -> dict:
    info = dict(host=platform.node(), python=platform.python_version(), cpu_count=os.cpu_count())
    try:
        import torch
        info.update(torch=torch.__version__, cuda=torch.version.cuda)
        if torch.cuda.is_available():  # this process forks nothing: its CUDA state harms no step
            info['gpu'] = torch.cuda.get_device_name(0)
            info['gpus'] = torch.cuda.device_count()
    except ImportError:
        pass
    return info


def run_step(step: Step, out: str) -> dict:
    log = osp.join(out, f'{step.name}.log')
    start = time.time()
    with open(log, 'w') as f:
        f.write(f'$ {subprocess.list2cmdline(step.argv)}\n')
        f.flush()
        try:
            code = subprocess.run(step.argv, cwd=REPO, stdout=f, stderr=subprocess.STDOUT, timeout=step.timeout,
                                  start_new_session=True).returncode
            status = 'ok' if code == 0 else f'failed (exit status {code})'
        except subprocess.TimeoutExpired:
            status = f'timed out after {step.timeout} s'
    return dict(name=step.name, status=status, seconds=round(time.time() - start, 1),
                command=subprocess.list2cmdline(step.argv), log=log)


def demo_summary(out: str) -> dict:
    """The demo pipeline's stages (status, time, metric) and its expected orderings, as it printed them."""
    summary_path = osp.join(out, 'demo', 'pipeline_summary.json')
    if not osp.isfile(summary_path):
        return {}
    with open(summary_path) as f:
        summary = json.load(f)
    with open(osp.join(out, 'demo.log'), errors='replace') as f:
        orderings = [line.split('expected ordering ', 1)[1].strip() for line in f if 'expected ordering ' in line]
    return dict(seconds=summary['seconds'], jobs=summary['jobs'], orderings=orderings,
                stages=[{k: s[k] for k in ('id', 'status', 'seconds', 'metric')} for s in summary['stages']])


def report(out: str, info: dict, results: List[dict], skipped: List[str]) -> dict:
    ratios, rows = {}, {}
    for result in results:
        path = osp.join(out, f'{result["name"]}.json')
        if result['name'].startswith('bench') and osp.isfile(path):
            with open(path) as f:
                data = json.load(f)
            ratios.update({f'{result["name"]}:{k}': v for k, v in data['ratios'].items()})
            rows[result['name']] = data['rows']
    data = dict(machine=info, steps=results, skipped=skipped, ratios=ratios, rows=rows, demo=demo_summary(out))
    with open(osp.join(out, 'gpu_check.json'), 'w') as f:
        json.dump(data, f, indent=2)
    with open(osp.join(out, 'gpu_check.md'), 'w') as f:
        f.write('\n'.join(markdown(data)) + '\n')
    return data


def markdown(data: dict) -> List[str]:
    info = data['machine']
    lines = [f'# GPU check: {info.get("gpu", "no GPU")} ({info.get("gpus", 0)} visible), {info["cpu_count"]} cores, '
             f'torch {info.get("torch")} (CUDA {info.get("cuda")}), Python {info["python"]}', '',
             '| step | status | seconds |', '|---|---|---|']
    lines += [f'| {r["name"]} | {r["status"]} | {r["seconds"]} |' for r in data['steps']]
    lines += [f'| {name} | skipped: over the budget | - |' for name in data['skipped']]
    if data['ratios']:
        lines += ['', '| ratio | value |', '|---|---|']
        lines += [f'| {k} | {v:.3f} |' for k, v in data['ratios'].items()]
    for step, rows in data['rows'].items():
        lines += ['', f'**{step}**', '', '| model | impl | mode | dtype | batch | img/s | ms/iter | peak MiB | '
                  'MFU % (measured GEMM / datasheet) |', '|---|---|---|---|---|---|---|---|---|']
        for r in rows:
            mfu = ' / '.join(_fmt(100 * r[k] if r.get(k) is not None else None) for k in ('mfu', 'mfu_datasheet'))
            lines.append(f'| {r.get("model")} | {r.get("impl")} | {r.get("mode")} | {r.get("dtype")} | '
                         f'{r.get("batch")} | {_fmt(r.get("img_per_s"))} | {_fmt(r.get("ms_per_iter"))} | '
                         f'{_fmt(r.get("peak_mem_mb"))} | {mfu} |')
    profiled = [(step, r) for step, rows in data['rows'].items() for r in rows if r.get('profile')]
    if profiled:
        lines += ['', '**device time per step, by kind** (`--profile`)', '']
        lines += [f'- {step}, {r["impl"]} ({_fmt(r.get("ms_per_iter"))} ms): {format_breakdown(r["profile"])}'
                  for step, r in profiled]
    demo = data['demo']
    if demo:
        lines += ['', f'**demo**: {demo["seconds"] / 60:.1f} min with --jobs {demo["jobs"]}', '']
        lines += [f'- {o}' for o in demo['orderings']]
        bad = [s for s in demo['stages'] if s['status'] not in ('ran', 'cached')]
        lines += [f'- stage {s["id"]}: {s["status"]}' for s in bad]
    return lines


def _fmt(value) -> str:
    return f'{value:.1f}' if isinstance(value, float) else '-' if value is None else str(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--out', default='work_dirs/gpu_check', help='where the report and logs go')
    parser.add_argument('--steps', help='comma-separated steps to run, in the order above (default: all)')
    parser.add_argument('--budget', type=float, default=600,
                        help='seconds (default 600); steps that would start later are skipped (the first always runs)')
    args = parser.parse_args(argv)
    out = osp.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    plan = steps(out)
    if args.steps:
        wanted = [s.strip() for s in args.steps.split(',') if s.strip()]
        unknown = [w for w in wanted if w not in {s.name for s in plan}]
        if unknown:
            parser.error(f'--steps: unknown {", ".join(unknown)}; the steps are {", ".join(s.name for s in plan)}')
        plan = [s for s in plan if s.name in wanted]
    previous = osp.join(out, 'gpu_check.json')  # a check run in parts (--steps) reports every part
    results = []
    if osp.isfile(previous):
        with open(previous) as f:
            results = [r for r in json.load(f)['steps'] if r['name'] not in {s.name for s in plan}]
    info, start, skipped = machine(), time.time(), []
    for i, step in enumerate(plan):
        if i and time.time() - start >= args.budget:
            skipped.append(step.name)
            continue
        print(f'[gpu_check] {step.name}: {subprocess.list2cmdline(step.argv)}', flush=True)
        result = run_step(step, out)
        print(f'[gpu_check] {step.name}: {result["status"]} in {result["seconds"]} s (log {result["log"]})',
              flush=True)
        results.append(result)
        report(out, info, results, skipped)
    data = report(out, info, results, skipped)
    print('\n'.join(markdown(data)))
    return 0 if all(r['status'] == 'ok' for r in results) and not skipped else 1


if __name__ == '__main__':
    sys.exit(main())
