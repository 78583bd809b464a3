#!/usr/bin/env python
"""Run a benchmark pipeline: a declared DAG of stages (pretrain → segmentation / detection / transfer →
leaderboard), each through tools/train.py or tools/test.py in its own work dir.

    python tools/pipeline.py configs/pipelines/demo.py              # the embedded demo (what `make demo` runs)
    python tools/pipeline.py configs/pipelines/demo.py --dry-run    # the stages and their commands, nothing run
    python tools/pipeline.py configs/pipelines/paper_deit3.py --backbones deit3_small_patch16_224 --resume
    python tools/pipeline.py configs/pipelines/demo.py --seeds 0,1,2 # every training 3 times: the spread
    python tools/pipeline.py my_pipeline.py --imports my_task       # a task of your own, its package on PYTHONPATH
    python tools/pipeline.py --table thesis:6.12 --dry-run          # one paper table's runnable rows (docs/coverage.md)
    python tools/pipeline.py --seed-study configs/pretrain/rsb_a2_resnet50_in1k_300e.py --seeds 1-100  # the spread

--table DOCUMENT:NUMBER (or a leaderboard id) runs the rows of one table of the map of the papers
(vitbench/results/papers/) that a config reproduces: each its config, overrides and backbone as the map gives them,
after the pre-training those rows need, then a leaderboard with the paper's numbers (harness/pipeline/paper_table.py).

--seed-study CONFIG trains one training config once per seed (--seeds, default 0-9) and ends with a leaderboard of
the mean ± std over the seeds, each cell's histogram over them, each seed's (val, V2) point and the spread along
the epochs (thesis Figures 6.7-6.10; harness/pipeline/seed_study.py); --backbones NAME runs it on that backbone.

With --seeds (or the config's seeds) every train / test stage runs once per seed, with --cfg-options
randomness.seed=K, in WORK_DIR/BACKBONE/STAGE/seedK (stage id BACKBONE/STAGE/seedK; one seed keeps the plain
id and folder); a stage that depends on a seeded one starts from the same seed's run.

On a Slurm cluster (executor='slurm' in the config, or --executor slurm) every stage is one job, submitted
through submitit with its dependencies (afterok) and its resources (the config's `slurm` defaults, each stage's
`resources`, or --partition --nodes --gpus-per-node --time --mem); the command returns once they are queued:

    python tools/pipeline.py configs/pipelines/paper_deit3.py --executor slurm --partition learnfair
    python tools/pipeline.py configs/pipelines/paper_deit3.py --status   # each job's state and its logs
    python tools/pipeline.py configs/pipelines/paper_deit3.py --wait     # follow them until they end
    python tools/pipeline.py configs/pipelines/paper_deit3.py --cancel   # scancel the jobs still queued

--jobs N runs up to N local stages at a time, as their dependencies allow, each with cpu_count // N threads (on any
machine: without GPUs too). On a machine with GPUs each train / test stage gets its own GPU where there are enough
(CUDA_VISIBLE_DEVICES; the least used GPU first), and --gpus-per-stage G runs each under torchrun on G of them:

    python tools/pipeline.py configs/pipelines/paper_maelite.py --jobs 8                     # one 8-GPU node
    python tools/pipeline.py configs/pipelines/paper_deit3.py --jobs 2 --gpus-per-stage 4

A stage whose result.json exists is skipped (delete its work dir to redo it), unless its recipe changed since it
ran (its config's values, options or a dependency: STAGE/stage.json): then it runs again from the start. A failing
stage is reported and the stages that depend on it are skipped, the others go on. One pipeline at a time in a work dir
(WORK_DIR/pipeline.lock); interrupted (Ctrl-C, SIGTERM) or killed, it stops the stages it started. Exit status:
0 all stages finished, 1 some did not, 2 the pipeline config is wrong or another pipeline runs in the work dir,
130 interrupted. A stage that fails shows the line that names its error: a config error or a refusal of the suite's
checks is one line naming the key to change (tools/train.py's 'error: ...'), an unforeseen error its traceback's
last line, with the end of the stage's log.

Progress: a line per stage, the latest training progress line every minute, and the pipeline's ETA (from its
stages' measured costs, else estimates: docs/pipeline.md, "Progress") on each of them.
"""
import argparse
import shlex
import signal
import sys

from harness.experiment.tracking import TRACKERS, missing_tracker
from harness.pipeline.gpus import GpuError
from harness.pipeline.paper_table import describe, load_table
from harness.pipeline.resources import ResourceError, check_value
from harness.pipeline.run import PipelineRunner
from harness.pipeline.seed_study import load_seed_study
from harness.pipeline.spec import PipelineError, load_pipeline
from vitbench.console import config_path
from vitbench.refusal import Refusal


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('config', metavar='PIPELINE_CONFIG', nargs='?',
                        help='pipeline config, e.g. configs/pipelines/demo.py (one shipped with vitbench also by its '
                        'name under configs/: pipelines/demo.py); or --table')
    parser.add_argument('--table', metavar='DOC:NUMBER',
                        help="instead of a config: run one paper table's runnable rows, e.g. thesis:6.12 or "
                        "'maelite:Figure 7' (as docs/coverage.md lists them) or a leaderboard id (deit3_ade20k); "
                        'work dir work_dirs/tables/DOC_NUMBER, torchrun on 8 GPUs unless --launcher')
    parser.add_argument('--seed-study', metavar='CONFIG',
                        help='instead of a config: train this training config once per seed (--seeds, default 0-9), '
                        'then a leaderboard with the histogram of each cell over the seeds; work dir '
                        'work_dirs/seeds/CONFIG_STEM')
    parser.add_argument('--backbones', metavar='A,B',
                        help="run the per-backbone stages for these variants (or timm:NAME models) instead of the "
                        "config's list")
    parser.add_argument('--work-dir', metavar='DIR', help="where the stages work (default: the config's work_dir)")
    parser.add_argument('--launcher', metavar='COMMAND',
                        help="prefix of every train/test command, e.g. 'torchrun --nproc_per_node 8' (with "
                        "--launcher pytorch added); 'none': plain python. Default: the config's launcher")
    parser.add_argument('--seeds', metavar='0,1,2',
                        help="run every train / test stage once per seed, e.g. 0,1,2 or 1-100 (replaces the config's "
                        "seeds; default: "
                        "the config's, else once with each config's own seed)")
    parser.add_argument('--baseline', metavar='NAME',
                        help="the leaderboard row the others are compared with: a recipe label such as 'scratch', "
                        "or a backbone name (replaces the leaderboard stages' baseline)")
    parser.add_argument('--resume', action='store_true',
                        help='stages that started but did not finish continue from their last checkpoint '
                        '(default: they start over)')
    parser.add_argument('--jobs', type=int, metavar='N',
                        help="stages run at the same time when their dependencies allow, each with "
                        "cpu_count // N threads (default: the config's jobs, else 1); on a machine with GPUs each "
                        "train / test stage gets its own, the least used first (CUDA_VISIBLE_DEVICES)")
    parser.add_argument('--gpus-per-stage', type=int, default=1, metavar='G',
                        help='GPUs of each local train / test stage, run under torchrun with one process per GPU '
                        '(default: 1); e.g. --jobs 2 --gpus-per-stage 4 on an 8-GPU node')
    parser.add_argument('--imports', nargs='+', action='extend', default=[], metavar='MODULE',
                        help="also import these modules (on PYTHONPATH; added to the config's imports): a task from "
                        'outside the suite, whose records its leaderboard stages read; its train / test stages get '
                        'them as --imports')
    parser.add_argument('--dry-run', action='store_true', help='print the stages and their commands; run nothing')
    parser.add_argument('--verbose', action='store_true', help="echo every stage's log (default: progress lines)")
    parser.add_argument('--vis-backend', action='append', default=[], choices=sorted(TRACKERS), dest='vis_backends',
                        metavar='{' + ','.join(TRACKERS) + '}',
                        help='every train stage also logs to this experiment tracker (repeatable; tools/train.py '
                        "--vis-backend); not part of a stage's recipe: a finished stage is not run again for it")
    slurm = parser.add_argument_group('Slurm (harness/pipeline/slurm.py, resources.py)')
    slurm.add_argument('--executor', choices=['local', 'slurm'],
                       help="'local': stages run here, --jobs at a time (default); 'slurm': each stage one job")
    slurm.add_argument('--partition', help="replaces the config's slurm partition")
    slurm.add_argument('--nodes', type=int, metavar='N', help="nodes per stage (a stage's own resources win)")
    slurm.add_argument('--gpus-per-node', type=int, metavar='G', help='GPUs per node; a training runs one task each')
    slurm.add_argument('--time', metavar='T', help="time limit per stage: minutes, 'HH:MM:SS' or 'D-HH:MM:SS'")
    slurm.add_argument('--mem', metavar='M', help="memory per node, e.g. '64G' (0: all)")
    slurm.add_argument('--status', action='store_true', help="each stage's job: its state and where its logs are")
    slurm.add_argument('--wait', action='store_true',
                       help='after submitting (or alone): follow the jobs until they end')
    slurm.add_argument('--cancel', action='store_true', help='scancel the jobs of this pipeline still queued')
    return parser.parse_args(argv)


def _slurm_options(args) -> dict:
    """--partition --nodes --gpus-per-node --time --mem: the stages' default Slurm resources."""
    checked = {}
    for key in ('partition', 'nodes', 'gpus_per_node', 'time', 'mem'):
        value = getattr(args, key)
        if value is not None:
            value = int(value) if key == 'time' and value.isdigit() else value
            try:
                checked[key] = check_value('--' + key.replace('_', '-'), key, value)
            except ResourceError as e:
                raise PipelineError(str(e)) from None
    return checked


def _seeds(text: str) -> list:
    """'0,1,2' → [0, 1, 2]; a range 'A-B' is A to B inclusive ('1-100': the thesis' seed study) (load_pipeline
    checks the list: not empty, no seed twice)."""
    seeds = []
    try:
        for part in filter(None, (p.strip() for p in text.split(','))):
            first, sep, last = part.partition('-')
            seeds += list(range(int(first), int(last) + 1)) if sep else [int(part)]
    except ValueError:
        raise PipelineError(f'--seeds {text!r}: expected whole numbers separated by commas, or ranges A-B, e.g. '
                            '0,1,2 or 1-100') from None
    return seeds


def main(argv=None) -> int:
    args = parse_args(argv)
    backbones = [b.strip() for b in args.backbones.split(',') if b.strip()] if args.backbones else None
    try:
        launcher = None if args.launcher is None else [] if args.launcher == 'none' else shlex.split(args.launcher)
        seeds = None if args.seeds is None else _seeds(args.seeds)
        missing = [m for m in map(missing_tracker, dict.fromkeys(args.vis_backends)) if m]
        if missing:  # before any stage starts, rather than in every train stage's log
            raise PipelineError('\n'.join(missing))
        if sum(x is not None for x in (args.config, args.table, args.seed_study)) != 1:
            raise PipelineError('give a pipeline config, --table DOC:NUMBER or --seed-study CONFIG (one of them), '
                                'e.g. configs/pipelines/demo.py, --table thesis:6.12 or --seed-study '
                                'configs/pretrain/rsb_a2_resnet50_in1k_300e.py')
        if args.seed_study is not None:
            if backbones and len(backbones) > 1:
                raise PipelineError(f'--backbones: a seed study runs one backbone, got {", ".join(backbones)}')
            pipeline = load_seed_study(config_path(args.seed_study), args.work_dir, launcher, seeds,
                                       backbones[0] if backbones else None, args.executor, _slurm_options(args),
                                       args.imports)
        elif args.table is not None:
            if backbones:
                raise PipelineError(f"--backbones: the rows of --table {args.table} run each on its own backbone "
                                    "(the map's 'run: {backbone: ...}')")
            print('\n'.join(describe(args.table)))
            pipeline = load_table(args.table, args.work_dir, launcher, seeds, args.baseline, args.executor,
                                  _slurm_options(args), args.imports)
        else:
            pipeline = load_pipeline(config_path(args.config), backbones, launcher, args.work_dir, seeds,
                                     args.baseline, args.executor, _slurm_options(args), args.imports)
        pipeline.vis_backends = list(dict.fromkeys(args.vis_backends))
        if args.status or args.wait or args.cancel or pipeline.executor == 'slurm':
            return _slurm_main(args, pipeline)
    except (PipelineError, Refusal) as e:  # a refusal of the suite's checks (vitbench/refusal.py): one line too
        print(f'error: {e}', file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print(f'error: --jobs must be >= 1, got {args.jobs}', file=sys.stderr)
        return 2
    try:
        runner = PipelineRunner(pipeline, resume=args.resume, verbose=args.verbose, jobs=args.jobs,
                                gpus_per_stage=args.gpus_per_stage)
    except GpuError as e:
        print(f'error: {e}', file=sys.stderr)
        return 2
    if args.dry_run:
        print('\n'.join(runner.plan()))
        return 0
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # kill / a batch system's stop: as Ctrl-C
    try:
        results = runner.run()
    except PipelineError as e:  # another pipeline holds the work dir
        print(f'error: {e}', file=sys.stderr)
        return 2
    if any(r.status == 'interrupted' for r in results):
        return 130
    return 0 if runner.ok else 1


def _slurm_main(args, pipeline) -> int:
    from harness.pipeline import slurm
    if args.status:
        print('\n'.join(slurm.status_lines(pipeline)))
        return 0
    if args.cancel:
        ids = slurm.cancel(pipeline)
        print(f'cancelled jobs {", ".join(ids)}' if ids else 'no job of this pipeline is queued')
        return 0
    if args.dry_run:
        for s in pipeline.stages:
            after = ', '.join(s.deps) if len(s.deps) < 4 else f'{len(s.deps)} stages'
            print(f'{s.id}: {slurm.describe(pipeline, s)}, after {after or "-"}')
        return 0
    if pipeline.executor == 'slurm':
        slurm.submit(pipeline, resume=args.resume)
    if not args.wait:
        return 0
    try:
        return 0 if slurm.wait(pipeline) else 1
    except KeyboardInterrupt:  # the jobs are Slurm's, not this process's: they go on
        print('stopped following; the jobs go on (--status to see them, --cancel to stop them)', file=sys.stderr)
        return 130


if __name__ == '__main__':
    sys.exit(main())
