#!/usr/bin/env python
"""Train any vitbench experiment (pretraining, fine-tuning, segmentation, detection, transfer) with
mmengine's Runner.

    python tools/train.py CONFIG [--work-dir DIR] [--resume [CHECKPOINT]] [--amp [auto]] [--compile] [--teacher PATH]
                         [--vis-backend tensorboard|wandb|mlflow ...] [--cfg-options K=V ...]
    torchrun --nproc_per_node N tools/train.py CONFIG --launcher pytorch
"""
import argparse

import torch

from vitbench.engine.amp import amp_plan, cuda_has_bf16
from vitbench.engine.compile import (BACKBONE, EagerOptimizerStep, compile_backbone, compile_plan,
                                     keep_data_preprocessor_eager, use_fused_adamw)
from harness.experiment.config_checks import empty_epoch_problem, training_problems
from harness.experiment.progress import pace_progress
from harness.experiment.lr_curve import ScheduleError, check_schedule, remember
from vitbench.engine.cpu_amp import cpu_has_fast_bf16
from vitbench.engine.run_cost import meter_of
from harness.experiment.cli import (ConfigError, add_common_args, add_tracking_args, build_runner, load_config,
                                     run_main, use_trackers)
from vitbench.results.schema import task_of


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(parser)
    parser.add_argument('--resume', nargs='?', const='auto', metavar='CHECKPOINT',
                        help='resume training: alone, from the latest checkpoint in the work dir; '
                        'with a path, from that checkpoint')
    parser.add_argument('--checkpoint', dest='backbone_checkpoint', metavar='PATH',
                        help='initialise the backbone from this checkpoint (any supported format)')
    parser.add_argument('--keep-blocks', type=int, metavar='K',
                        help='load only the first K blocks of the backbone weights and re-initialise the rest '
                        '(MAE-lite keep-first-k-blocks; recorded as pretrain.keep_blocks in result.json)')
    parser.add_argument('--amp', nargs='?', const='on', choices=('on', 'auto', 'off'),
                        help='automatic mixed precision: bfloat16 without loss scaling on GPUs that have it '
                        '(compute capability >= 8.0) and on CPUs with bf16 instructions, float16 with loss scaling '
                        'on older GPUs and for detection on any GPU; refused where it cannot run or would be slower. '
                        "'--amp auto': mixed precision where it is available and faster, float32 elsewhere (what "
                        "the demo pipeline uses); '--amp off': float32, as without --amp (a pipeline's argument a "
                        'variable can set: VITBENCH_AMP=off make demo). result.json records the precision '
                        '(cost.precision)')
    parser.add_argument('--compile', action='store_true',
                        help="torch.compile the training step (mmengine's `compile` key; options with --cfg-options "
                        'compile.mode=max-autotune); detection compiles its backbone only. The first iterations '
                        'are slow while it compiles; result.json records it (cost.compiled)')
    parser.add_argument('--teacher', metavar='PATH',
                        help="the distillation teacher's weights (model.distillation.teacher.checkpoint, or "
                        "model.teacher.checkpoint for distilled MAE): e.g. the official DeiT RegNetY-16GF file, or "
                        "a timm state dict of the teacher the config names; nothing is downloaded")
    add_tracking_args(parser)
    return parser.parse_args(argv)


def use_teacher(cfg, path: str) -> None:
    """Point the config's distillation teacher at ``path`` (``--teacher``), refusing in one line a missing file or
    a config without a teacher."""
    import os.path as osp
    model = cfg.get('model') or {}
    teacher = (model.get('distillation') or {}).get('teacher') or model.get('teacher')
    if teacher is None:
        raise ConfigError(f'--teacher {path}: the config has no distillation teacher (model.distillation.teacher '
                          'or model.teacher)')
    if not osp.isfile(path):
        raise ConfigError(f"--teacher {path}: file not found (expected the teacher's weights, e.g. the official "
                          'regnety_160-a5fe301d.pth of DeiT, or a timm state dict)')
    teacher['checkpoint'] = path


def main(argv=None):
    args = parse_args(argv)
    cfg = load_config(args)
    if args.teacher:
        use_teacher(cfg, args.teacher)
    use_trackers(cfg, args.vis_backends)
    problems = training_problems(cfg)
    if problems:
        raise ConfigError(f'{args.config}: {problems[0]}')
    if args.resume is not None:  # the checkpoint load_config checked (--resume alone: the work dir's latest
        cfg.resume, cfg.load_from = True, args.resume_from  # undamaged one; None: none, the Runner starts afresh)
    task = (cfg.get('experiment') or {}).get('task')
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    if args.amp in ('on', 'auto'):
        use_mixed_precision(cfg, args.config, task, device, auto=args.amp == 'auto')
    if use_fused_adamw((cfg.get('optim_wrapper') or {}).get('optimizer'), device):
        cfg.optim_wrapper.optimizer.fused = True  # same update up to rounding, one kernel for all parameters
    compile_options = cfg.get('compile') or (args.compile or None)  # --compile, or the config's own key
    scope = None
    if compile_options:
        scope, why = compile_plan(task)
        if why:
            print(why, flush=True)
        # mmengine compiles the whole train_step when the key is set
        cfg.compile = None if scope == BACKBONE else compile_options
    runner = build_runner(cfg)
    # the data built here rather than in runner.train(), to be checked first: a dataset that cannot be read (its
    # layout, its annotations) is said without a traceback, and a schedule converted to iterations would otherwise
    # stop on an assertion naming neither batch nor dataset size
    try:
        loader = runner.train_dataloader
        runner.val_loop  # noqa: B018 - builds the validation data and metric too (None without validation)
    except (ValueError, OSError) as e:  # the readers' layout and annotation errors name the file and the fix
        raise ConfigError(f'{args.config}: {e}') from None
    problem = empty_epoch_problem(loader)
    if problem:
        raise ConfigError(f'{args.config}: {problem}')
    pace_progress(runner)  # progress lines at a rate for the run's length (harness/experiment/progress.py)
    use_checked_schedule(runner, args.config, len(loader))
    if scope == BACKBONE:
        compile_backbone(runner, {} if compile_options is True else dict(compile_options))
    elif scope is not None:
        keep_data_preprocessor_eager(runner)
        runner.register_hook(EagerOptimizerStep())
    meter_of(runner).compiled = scope
    runner.train()


def use_checked_schedule(runner, config: str, iters_per_epoch: int) -> None:
    """The learning-rate curve for the run's real iterations per epoch and world size
    (:mod:`harness.experiment.lr_curve`): refused when it never reaches its peak; epoch-stepped schedulers that
    would not reach it are stepped per iteration instead, said in the log. The curve's peak and end go into
    result.json."""
    try:
        curve, converted, note = check_schedule(runner.cfg, iters_per_epoch, runner.world_size)
    except ScheduleError as e:
        raise ConfigError(f'{config}: {e}') from None
    if converted is not None:
        runner.param_schedulers = converted
        runner.cfg.param_scheduler = converted
        runner.dump_config()  # the config beside the results says what runs
        runner.logger.warning(note)
    remember(runner, curve)


def use_mixed_precision(cfg, config: str, task, device: str, auto: bool) -> None:
    """Switch ``cfg`` to the mixed precision of :func:`vitbench.engine.amp.amp_plan`. Where it is float32 (mixed
    precision cannot run or would be slower), ``--amp`` is refused (the user asked for it) and ``--amp auto``
    keeps float32 and says why."""
    plan = amp_plan(device, task, gpu_bf16=device == 'cuda' and cuda_has_bf16(),
                    cpu_fast_bf16=device == 'cpu' and cpu_has_fast_bf16())
    if plan.wrapper is not None:
        wrapper = dict(plan.wrapper)
        if plan.precision == 'fp16':
            wrapper['loss_scale'] = cfg.optim_wrapper.get('loss_scale', wrapper['loss_scale'])  # the config's
        else:
            cfg.optim_wrapper.pop('loss_scale', None)  # bfloat16 has float32's range: no loss scaling
        cfg.optim_wrapper.update(wrapper)
        if plan.why:
            print(f'--amp: float16 ({plan.why})', flush=True)
        return
    if not auto:  # refused, not replaced by float32: the user asked for mixed precision
        record = task_of(task)
        if record is not None and record.roi_ops:
            raise ConfigError(f'{config}: --amp without a GPU is not available for {record.title}: {plan.why}; '
                              'train without --amp')
        raise ConfigError(f'--amp: {plan.why}; train without --amp (float32 is the faster choice here)')
    print(f'--amp auto: float32 ({plan.why})', flush=True)


if __name__ == '__main__':
    run_main(main)
