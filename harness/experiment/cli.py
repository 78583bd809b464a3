"""What tools/train.py and tools/test.py share: config loading, common options, the distributed set-up on
CPU, and building mmengine's Runner — for configs of any default scope (vitbench, mmseg, mmdet, ...)."""
import argparse
import datetime
import os
import os.path as osp
import subprocess
import sys
from typing import Optional

import torch
import torch.distributed as dist
from mmengine.config import Config, DictAction
from mmengine.registry import MODEL_WRAPPERS, RUNNERS
from mmengine.runner import Runner
from mmengine.utils import import_modules_from_strings
from torch.nn.parallel import DistributedDataParallel

from backbones.checkpoint import CheckpointError, read_checkpoint
from backbones.layers.residual_scale import SCALES_FROM_CHECKPOINT
from downstream.backbone_swap import apply_head_rule, head_rule_mismatches, swap_backbone
# register the hooks build_runner adds
from harness.experiment import param_table, result_hook, run_identity  # noqa: F401
from harness.experiment.config_checks import config_problems
from harness.experiment.divergence import TrainingDiverged
from harness.experiment.test_crop import apply_test_crop_ratio
from harness.experiment.tracking import TRACKERS, add_trackers
from harness.tasks import ImportsError, import_modules
from vitbench.console import config_path
from vitbench.engine.checkpoint_integrity import checkpoint_damage, earlier_checkpoints, read_pointer
from vitbench.engine.checkpoint_policy import install_checkpoint_policy
from vitbench.fileio import WriteError
from vitbench.refusal import Refusal
from vitbench.results.experiment import experiment_options
from vitbench.results.schema import DIVERGED_EXIT_STATUS
from vitbench.sample_error import SampleError, one_line


class ConfigError(Exception):
    """A config that cannot be found, parsed or built. The tools report it in one line and exit 2."""


def add_common_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('config', help='config file (mmengine format), or the name of one shipped with vitbench: '
                        'its path under configs/, e.g. demo/sup_demo.py')
    parser.add_argument('--work-dir', help='where logs and result.json go, and a training\'s checkpoints '
                        '(default: ./work_dirs/<config name>)')
    parser.add_argument('--cfg-options', nargs='+', action=DictAction, default={}, metavar='KEY=VALUE',
                        help='override config keys, e.g. model.backbone.drop_path_rate=0.2 '
                        'train_dataloader.batch_size=8 (lists: key="[a,b]")')
    parser.add_argument('--backbone', metavar='NAME',
                        help='swap the backbone for this named variant (tools/list_backbones.py lists them) or '
                        'any timm model, timm:NAME; widths of necks and heads follow')
    parser.add_argument('--imports', nargs='+', action='extend', default=[], metavar='MODULE',
                        help="also import these modules (on PYTHONPATH), as if the config's custom_imports named "
                        'them, and the saved config does: a task or a backbone family from outside the suite')
    parser.add_argument('--launcher', choices=['none', 'pytorch', 'slurm'], default='none',
                        help='job launcher for distributed runs (torchrun → pytorch)')
    # torch.distributed.launch passes --local_rank / --local-rank; torchrun sets LOCAL_RANK itself.
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0, help=argparse.SUPPRESS)


def add_tracking_args(parser: argparse.ArgumentParser) -> None:
    """``--vis-backend NAME``, repeatable: experiment trackers for a training (:func:`use_trackers`)."""
    parser.add_argument('--vis-backend', action='append', default=[], choices=sorted(TRACKERS), dest='vis_backends',
                        metavar='{' + ','.join(TRACKERS) + '}',
                        help='also log the scalars to this experiment tracker (repeatable), beside scalars.json in '
                        'WORK_DIR/<time>/vis_data: TensorBoard, W&B (an offline run unless WANDB_MODE is set; wandb '
                        'sync uploads it) or MLflow (a file store there unless MLFLOW_TRACKING_URI is set). Each is '
                        "an optional extra: pip install 'vitbench[tracking]'")


def use_trackers(cfg, names) -> None:
    """Add the ``--vis-backend`` trackers to ``cfg``'s visualizer; a missing package is a ConfigError naming its
    extra."""
    problems = add_trackers(cfg, names or [])
    if problems:
        raise ConfigError('\n'.join(problems))


def add_imports(cfg, modules) -> None:
    """``--imports``: import ``modules`` and add them to ``cfg``'s ``custom_imports`` (the config the run saves
    imports them again when it is run as it is); a failure is a ConfigError naming the module."""
    custom = dict(cfg.get('custom_imports') or {})
    names = custom.get('imports') or []
    names = [names] if isinstance(names, str) else list(names)
    try:
        import_modules(modules)  # not mmengine's import_modules_from_strings: it hides the cause
    except ImportsError as e:
        raise ConfigError(str(e)) from None
    names += [module for module in dict.fromkeys(modules) if module not in names]
    if modules:
        cfg.custom_imports = dict(custom, imports=names, allow_failed_imports=custom.get('allow_failed_imports', False))


def _check_head_rule(config: str, cfg, options: Optional[dict] = None) -> None:
    """A config whose widths its protocol's head rule does not give its backbone, or a ``--cfg-options`` width
    against the rule: a ConfigError (the rule decides the widths of every run, downstream/head_rule.py)."""
    try:
        found = head_rule_mismatches(cfg, options)
    except (KeyError, ValueError) as e:
        raise ConfigError(f'{config}: {e.args[0] if e.args else e}') from e
    if found:
        where = '--cfg-options' if options is not None else 'the config'
        raise ConfigError(f"{config}: {where} sets {', '.join(found)}, against its protocol's head rule "
                          f"experiment.protocol.heads={dict(cfg.experiment.protocol.heads)}: change the rule (its "
                          'digest records it), not the widths')


def _record_options(cfg, options: dict) -> None:
    """Keep the ``--cfg-options`` that change the experiment in ``experiment.options``, which ``result.json``
    records (``options``): the leaderboard tells a run of a config with options from one without, and links a
    paper row's ``run: {config, cfg_options}`` only to runs made with those options. A config dumped by a run
    keeps them, so its rerun records them too (with the new options on top)."""
    experiment = cfg.get('experiment')
    if not isinstance(experiment, dict):
        return
    kept = experiment_options({**dict(experiment.get('options') or {}), **options})
    if kept or 'options' in experiment:
        experiment['options'] = kept


def load_config(args: argparse.Namespace):
    """Read ``args.config``, apply ``--cfg-options``, ``--backbone`` / ``--checkpoint``, ``--work-dir`` and
    ``--launcher``."""
    args.config = config_path(args.config)  # a path, else a config shipped with vitbench (vitbench/console.py)
    if not osp.isfile(args.config):
        raise ConfigError(f"config file '{args.config}' not found (expected a path to an mmengine config, "
                          'e.g. configs/upernet_deit3_b.py, or the name of one shipped with vitbench, e.g. '
                          'demo/sup_demo.py)')
    try:
        cfg = Config.fromfile(args.config)
    except Exception as e:  # syntax errors, missing _base_ files, ...
        raise ConfigError(f"config file '{args.config}' could not be read: {type(e).__name__}: {e}") from e
    keys_before = list(cfg.keys())
    _check_head_rule(args.config, cfg)  # the file as written: its widths are its rule's for its own backbone
    try:
        if args.cfg_options:
            cfg.merge_from_dict(args.cfg_options)
    except Exception as e:
        raise ConfigError(f'--cfg-options {args.cfg_options} could not be applied to {args.config}: {e}') from e
    if any(k.split('.')[0] == 'custom_imports' for k in args.cfg_options or {}):  # a config's own ran at parsing
        imports = cfg.custom_imports.get('imports')
        if not imports:
            raise ConfigError('--cfg-options custom_imports: expected custom_imports.imports=[module, ...] (modules '
                              'on PYTHONPATH, e.g. custom_imports.imports=[my_family])')
        try:
            import_modules_from_strings(**cfg.custom_imports)
        except Exception as e:  # a missing module, or one whose registration refuses (a family record, a task)
            raise ConfigError(f'--cfg-options custom_imports: {imports}: {type(e).__name__}: {e}') from e
    add_imports(cfg, getattr(args, 'imports', None) or [])
    _record_options(cfg, args.cfg_options or {})

    checkpoint = getattr(args, 'backbone_checkpoint', None)
    keep_blocks = getattr(args, 'keep_blocks', None)
    if args.backbone or checkpoint or keep_blocks is not None:
        try:
            swap_backbone(cfg, args.backbone, checkpoint, keep_blocks)
        except (KeyError, ValueError, FileNotFoundError) as e:
            raise ConfigError(f'{args.config}: {e.args[0] if e.args else e}') from e
    if ((cfg.get('model') or {}).get('backbone') or {}).get('residual_scale_from') == SCALES_FROM_CHECKPOINT:
        raise ConfigError(f"{args.config}: model.backbone.residual_scale_from='{SCALES_FROM_CHECKPOINT}' takes the "
                          'residual scales of --checkpoint, and none was given: pass --checkpoint PATH (e.g. a '
                          "LayerScale training's backbone.pth)")
    _check_head_rule(args.config, cfg, args.cfg_options or {})
    apply_head_rule(cfg)  # the (possibly --cfg-options') rule's widths for the run's backbone
    try:
        apply_test_crop_ratio(cfg)  # test_crop_ratio (possibly --cfg-options') into the evaluation pipelines
    except ValueError as e:
        raise ConfigError(f'{args.config}: {e}') from e
    problems = config_problems(cfg, args.cfg_options or {}, keys_before)
    if problems:  # before anything is built: one line each
        raise ConfigError('\n'.join(f'{args.config}: {p}' for p in problems))

    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir') is None:
        name = osp.splitext(osp.basename(args.config))[0]
        cfg.work_dir = osp.join('./work_dirs', f'{name}_{args.backbone}' if args.backbone else name)
    cfg.launcher = args.launcher
    _check_checkpoints_to_load(args, cfg)
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    if args.launcher != 'none' and not torch.cuda.is_available():
        _prepare_cpu_distributed(cfg, args.launcher)
    return cfg


def _check_checkpoints_to_load(args: argparse.Namespace, cfg) -> None:
    """Every checkpoint a run will load is checked first (``vitbench.engine.checkpoint_integrity``): the archive's
    CRCs and the sha256 written beside it at save, then the checkpoint policy (the tensors memory-mapped, not read).
    A damaged or refused file stops here in one line naming it, not with torch's error after the Runner is built.

    ``--resume`` alone resumes from what ``WORK_DIR/last_checkpoint`` names, read relative to the work dir (a copied
    work dir resumes its own files), set here as the checkpoint to resume; a damaged one falls back to the latest
    undamaged earlier checkpoint of the work dir, both named in one line. A named ``--resume PATH``, tools/test.py's
    checkpoint, ``--checkpoint`` and ``load_from`` are refused when damaged."""
    install_checkpoint_policy()  # what the Runner loads under: runner checkpoints hold numpy values
    resume = getattr(args, 'resume', None)
    if resume == 'auto':  # the Runner resumes from the checkpoint this pointer names, if any
        resume = read_pointer(cfg.work_dir)
        if resume and osp.isfile(resume):
            resume = _undamaged_for_resume(resume, cfg.work_dir)
        else:
            resume = None  # none, an empty or a dangling pointer: the RunStateHook says so once the work dir is locked
    if hasattr(args, 'resume'):
        # tools/train.py resumes from it, named: mmengine would read the pointer's text as a path from the cwd
        args.resume_from = resume
    for option, path in (('checkpoint', getattr(args, 'checkpoint', None)), ('--resume', resume),
                         ('--checkpoint', getattr(args, 'backbone_checkpoint', None)),
                         ('load_from', None if resume else cfg.get('load_from'))):
        if isinstance(path, str) and osp.isfile(path):
            damage = checkpoint_damage(path)
            if damage:
                raise ConfigError(f'{option} {path} {damage}; it cannot be used: copy it again, or use another '
                                  'checkpoint')
            try:
                read_checkpoint(path, mmap=True)
            except CheckpointError as e:
                raise ConfigError(f'{option} {e}') from None


def _undamaged_for_resume(latest: str, work_dir: str) -> str:
    """``latest``, or where its damage makes ``--resume`` fall back to: the latest undamaged earlier checkpoint of
    the work dir, said in one line. None undamaged: a ConfigError naming them."""
    damage = checkpoint_damage(latest)
    if not damage:
        return latest
    tried = [f'{latest} {damage}']
    for earlier in earlier_checkpoints(work_dir, latest):
        why = checkpoint_damage(earlier)
        if why is None:
            print(f'--resume: {tried[0]}; resuming from {earlier}, the latest undamaged checkpoint before it',
                  flush=True)
            return earlier
        tried.append(f'{earlier} {why}')
    raise ConfigError(f"--resume: {'; '.join(tried)}; no undamaged checkpoint to resume from in {work_dir} (copy "
                      'them again, or start over in another --work-dir)')


def _prepare_cpu_distributed(cfg, launcher: str) -> None:
    """Distributed training without GPUs (gloo), e.g. ``torchrun --nproc_per_node 2 ... --launcher pytorch``, or
    tasks started by srun with ``--launcher slurm``.

    mmengine 0.10.7 assumes CUDA here: ``init_dist`` calls ``torch.cuda.set_device`` and the DDP wrapper
    gets ``device_ids=[LOCAL_RANK]``, both of which fail for CPU modules. We start the process group
    ourselves (the Runner then skips its own init) and give DDP ``device_ids=None``.
    """
    if launcher == 'slurm':  # what mmengine's slurm launcher derives on GPUs, from srun's variables
        missing = [v for v in ('SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_NODELIST') if v not in os.environ]
        if missing:
            raise ConfigError(f'--launcher slurm: {missing[0]} is not set; start the run with srun (one task per '
                              'process), e.g. through tools/pipeline.py --executor slurm')
        os.environ.update(RANK=os.environ['SLURM_PROCID'], WORLD_SIZE=os.environ['SLURM_NTASKS'],
                          LOCAL_RANK=os.environ.get('SLURM_LOCALID', '0'))
        os.environ.setdefault('MASTER_PORT', '29500')
        if 'MASTER_ADDR' not in os.environ:  # the first node; this one when there is one
            os.environ['MASTER_ADDR'] = '127.0.0.1' if os.environ.get('SLURM_NNODES') == '1' else subprocess.getoutput(
                f"scontrol show hostnames {os.environ['SLURM_NODELIST']} | head -n1")
    elif launcher != 'pytorch':
        raise ConfigError(f"--launcher {launcher} needs CUDA GPUs; without GPUs use "
                          "'torchrun --nproc_per_node N tools/train.py CONFIG --launcher pytorch' or srun with "
                          '--launcher slurm')
    if not dist.is_initialized():
        timeout = cfg.get('env_cfg', {}).get('dist_cfg', {}).get('timeout')
        kwargs = {} if timeout is None else dict(timeout=datetime.timedelta(seconds=timeout))
        dist.init_process_group(backend='gloo', **kwargs)
    wrapper = cfg.get('model_wrapper_cfg') or dict(type='MMDistributedDataParallel')
    wrapper_cls = MODEL_WRAPPERS.get(wrapper['type'])
    if wrapper_cls is not None and issubclass(wrapper_cls, DistributedDataParallel):
        wrapper.setdefault('device_ids', None)
    cfg.model_wrapper_cfg = wrapper


class TestOnlyRunner(Runner):
    """mmengine's Runner with no training loop, for ``tools/test.py``. mmseg's SegVisualizationHook asks
    ``runner.iter`` for its step in test mode, which builds the training loop and with it the training set: a test
    with ``--show-dir`` then needed the training images, and listed all of them. The config stays whole
    (``runner.cfg``): the result record reads its protocol's training settings."""

    @property
    def train_loop(self):
        return None


def build_runner(cfg, test_only: bool = False):
    """Build mmengine's Runner (or the config's ``runner_type``; :class:`TestOnlyRunner` with ``test_only``); a
    build failure is a ConfigError.

    A config with an ``experiment`` dict gets the hook that writes ``work_dir/result.json``. The Runner
    saves and loads its checkpoints under the checkpoint policy, which this installs."""
    install_checkpoint_policy()
    cfg.custom_hooks = [*cfg.get('custom_hooks', []), dict(type='vitbench.RunStateHook')]  # lock, exact resume
    _add_hook_unless_listed(cfg, 'RunIdentityHook')  # run id in checkpoints; a resume that changes the run refused
    _use_verified_checkpoint_hook(cfg)
    _add_hook_unless_listed(cfg, 'DivergenceHook')  # a non-finite loss stops the run
    _add_ema_hook(cfg)
    if cfg.get('experiment'):
        _add_hook_unless_listed(cfg, 'ResultRecorderHook')
        _add_hook_unless_listed(cfg, 'ParamTableHook')  # param_groups.json beside result.json
    try:
        if 'runner_type' in cfg:
            return RUNNERS.build(cfg)
        return (TestOnlyRunner if test_only else Runner).from_cfg(cfg)
    except Exception as e:
        raise ConfigError(f"config '{cfg.filename}' failed to build: {type(e).__name__}: {e}") from e


def _add_ema_hook(cfg) -> None:
    """A recipe's ``ema = dict(enabled=..., momentum=..., **EMAHook options)`` (the DeiT recipe's switch, thesis
    Table 3.8 "+ EMA"): when enabled, mmengine's EMAHook keeps the moving average of the weights, which the
    validations score and the checkpoints hold; ``enabled=False`` (the recipe's default) adds nothing."""
    ema = cfg.get('ema')
    if not ema or not ema.get('enabled'):
        return
    options = {k: v for k, v in ema.items() if k != 'enabled'}
    cfg.custom_hooks = [*cfg.custom_hooks, dict(type='mmengine.EMAHook', **options)]


def _use_verified_checkpoint_hook(cfg) -> None:
    """mmengine's CheckpointHook (the config's, or the default one) becomes ``vitbench.VerifiedCheckpointHook``,
    with the same arguments: its ``last_checkpoint`` pointer is relative to the work dir."""
    if cfg.get('default_hooks') is None:
        cfg.default_hooks = {}  # mmengine merges what is given into its defaults
    hooks = cfg.default_hooks
    checkpoint = hooks.get('checkpoint')
    if checkpoint is None:
        hooks['checkpoint'] = dict(type='vitbench.VerifiedCheckpointHook', interval=1)  # mmengine's default
    elif isinstance(checkpoint, dict) and checkpoint.get('type') in ('CheckpointHook', 'mmengine.CheckpointHook'):
        checkpoint['type'] = 'vitbench.VerifiedCheckpointHook'


def _add_hook_unless_listed(cfg, name: str) -> None:
    """Append ``vitbench.<name>`` to ``custom_hooks`` unless the config lists it (with its own arguments)."""
    if not any(h.get('type', '').endswith(name) for h in cfg.custom_hooks):
        cfg.custom_hooks = [*cfg.custom_hooks, dict(type=f'vitbench.{name}')]


def run_main(main) -> None:
    """Call ``main()``; a ConfigError, a checkpoint that cannot be used (damaged, of another model, with non-finite
    weights), a data sample that cannot be read (:class:`~vitbench.sample_error.SampleError`) or a file that cannot
    be written (disk full: :class:`~vitbench.fileio.WriteError`) or a run refused by one of the suite's checks
    (:class:`~vitbench.refusal.Refusal`: the key to change, with its full path) becomes one message on stderr and
    exit status 2 (any other exception keeps its traceback);
    a training whose loss stopped being finite (:class:`~harness.experiment.divergence.TrainingDiverged`) one
    line and exit status 3."""
    try:
        main()
    except (ConfigError, CheckpointError) as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(2)
    except (SampleError, WriteError) as e:  # a file that cannot be read or written: named, one line
        print(f'error: {one_line(e) if isinstance(e, SampleError) else e}', file=sys.stderr)
        sys.exit(2)
    except Refusal as e:  # one of the suite's checks at run time: the key to change, with its full path
        print(f'error: {e.one_line()}', file=sys.stderr)
        sys.exit(2)
    except TrainingDiverged as e:
        print(f'error: {e}', file=sys.stderr)
        sys.exit(DIVERGED_EXIT_STATUS)
