"""How a stage runs: the argv of a train / test / command stage, its ``{...}`` references filled in
(:func:`command_of`), and the program and ``--launcher`` a train / test stage starts under (:func:`launch_of`)."""
import os.path as osp
import sys
from typing import List, Optional, Tuple

from vitbench.console import root
from vitbench.engine.checkpoint_integrity import read_pointer

from .gpus import torchrun
from .spec import Pipeline, PipelineError, Stage

REPO = root()  # the folder of tools/: the repository, or its copy shipped with an installed vitbench


class _StageRef:
    """What ``{STAGE}`` means in a string: the stage's work dir; ``{STAGE.last_checkpoint}`` its latest checkpoint."""

    def __init__(self, stage: Stage):
        self.stage = stage

    def __format__(self, spec):
        return format(self.stage.work_dir, spec)

    @property
    def last_checkpoint(self) -> str:
        named = read_pointer(self.stage.work_dir)  # relative to the stage's folder (vitbench writes it so)
        if not named:
            pointer = osp.join(self.stage.work_dir, 'last_checkpoint')
            raise PipelineError(f"stage '{self.stage.id}' left no checkpoint ({pointer} does not exist or is empty)")
        return named


def resolve(pipeline: Pipeline, stage: Stage, value):
    """``value`` with every ``{...}`` filled in for ``stage`` (lists and dicts element by element)."""
    if isinstance(value, str):
        fields = dict(backbone=stage.backbone or '', work_dir=stage.work_dir, root=pipeline.work_dir)
        fields.update({name: _StageRef(pipeline.stage(ref)) for name, ref in stage.refs.items()})
        return value.format_map(fields)
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(pipeline, stage, v) for v in value)
    if isinstance(value, dict):
        return {k: resolve(pipeline, stage, v) for k, v in value.items()}
    return value


def _option(value) -> str:
    """A Python value as ``--cfg-options`` (mmengine's DictAction) reads it back."""
    if isinstance(value, list):
        return '[' + ','.join(_option(v) for v in value) + ']'
    if isinstance(value, tuple):
        return '(' + ','.join(_option(v) for v in value) + ',)'
    return str(value)


def _script(path: str) -> str:
    """Scripts are found from the working directory first, else in the repository or, installed, among the files
    shipped with vitbench (tools/...)."""
    if osp.isabs(path) or osp.exists(path):
        return path
    in_repo = osp.join(REPO, path)
    return in_repo if osp.exists(in_repo) else path


def launch_of(pipeline: Pipeline, launcher: Optional[str] = None,
              gpus_per_stage: int = 1) -> Tuple[List[str], Optional[str]]:
    """How a train / test stage starts: the program its script runs under and its ``--launcher`` (None: this
    python, one process). ``launcher`` and ``gpus_per_stage`` as for :func:`command_of`."""
    if launcher:  # started by its own process manager (srun): this python under the manager's launcher
        return [sys.executable], launcher
    if pipeline.launcher:  # torchrun ... runs the script itself
        return list(pipeline.launcher), 'pytorch'
    if gpus_per_stage > 1:  # one process per GPU of the stage
        return torchrun(gpus_per_stage), 'pytorch'
    return [sys.executable], None


def command_of(pipeline: Pipeline, stage: Stage, resume: bool = False, launcher: Optional[str] = None,
               gpus_per_stage: int = 1) -> List[str]:
    """The argv a train / test / command stage runs (its ``{...}`` references filled in); ``launcher``: the
    ``--launcher`` of a train / test run started by its own process manager (``'slurm'``: srun), else the
    pipeline's launcher prefix with ``--launcher pytorch``, else torchrun for a stage of ``gpus_per_stage`` > 1
    GPUs on this machine."""
    spec = stage.spec
    if stage.kind == 'command':
        argv = resolve(pipeline, stage, list(spec['argv']))
        argv[0] = _script(argv[0])
        return [sys.executable, *argv] if argv[0].endswith('.py') else argv
    options = dict(resolve(pipeline, stage, dict(spec.get('cfg_options') or {})))
    python, launcher = launch_of(pipeline, launcher, gpus_per_stage)
    if stage.kind == 'train':
        argv = [*python, osp.join(REPO, 'tools', 'train.py'), stage.config, '--work-dir', stage.work_dir]
        if spec.get('checkpoint'):
            argv += ['--checkpoint', resolve(pipeline, stage, spec['checkpoint'])]
        if resume and osp.isfile(osp.join(stage.work_dir, 'last_checkpoint')):
            argv.append('--resume')
        for tracker in pipeline.vis_backends:
            argv += ['--vis-backend', tracker]
    else:  # test
        argv = [*python, osp.join(REPO, 'tools', 'test.py'), stage.config,
                resolve(pipeline, stage, spec['weights']), '--work-dir', stage.work_dir]
        if spec.get('tta'):
            argv.append('--tta')
        if spec.get('checkpoint'):  # tools/test.py has no --checkpoint: record the provenance as train.py does
            options.update({'experiment.checkpoint': resolve(pipeline, stage, spec['checkpoint']),
                            'experiment.pretrain': None})
    if stage.seed is not None:  # the pipeline's seed wins over one in the stage's cfg_options: runs must differ
        options['randomness.seed'] = stage.seed
    if launcher:
        argv += ['--launcher', launcher]
    if stage.swap:
        argv += ['--backbone', stage.swap]
    if pipeline.imports:
        argv += ['--imports', *pipeline.imports]
    argv += resolve(pipeline, stage, list(spec.get('args') or []))
    if options:
        argv += ['--cfg-options', *[f'{k}={_option(v)}' for k, v in options.items()]]
    return argv
