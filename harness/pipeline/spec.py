"""A benchmark pipeline: a declared DAG of stages (pretrain → downstream → leaderboard), checked before it runs.

A pipeline config is an mmengine ``Config`` python file::

    work_dir = 'work_dirs/demo'            # every stage works in a folder under it
    backbones = ['vit_demo_patch8_64']     # per-backbone stages run once for each (--backbones replaces it)
    launcher = None                        # or e.g. ['torchrun', '--nproc_per_node', '8'] (--launcher replaces it)
    jobs = 1                               # stages run at the same time when their dependencies allow (--jobs)
    seeds = [0, 1, 2]                      # optional: every train / test stage runs once per seed (--seeds)
    executor = 'local'                     # or 'slurm': each stage one Slurm job, with the `slurm` defaults and
                                           # each stage's `resources` (harness/pipeline/resources.py)
    imports = ['my_task']                  # optional: modules on PYTHONPATH to import (--imports adds to them)
    stages = [
        dict(name='data', kind='command', argv=['tools/make_demo_data.py', '--out', 'data/demo']),
        dict(name='mae', config='configs/demo/mae_demo.py', depends_on=['data'], outputs=['backbone.pth']),
        dict(name='upernet_mae', config='configs/demo/upernet_demo.py', depends_on=['mae'],
             checkpoint='{mae}/backbone.pth'),
        dict(name='leaderboard', kind='leaderboard', depends_on=['upernet_mae'], baseline='scratch'),
    ]

``imports`` names modules from outside the suite (a task's package, a backbone family): the pipeline imports them
before it reads its stages (``harness.tasks``: its leaderboard stages and stage summaries know the task's record) and
every train / test stage gets ``--imports`` with them (tools/train.py adds them to the config's ``custom_imports``).

Stage kinds and their keys (besides ``name``, ``kind``, ``depends_on``, ``per_backbone``, ``metric``, ``outputs``,
``resources``):

* ``train`` (the default when ``config`` is given): ``tools/train.py CONFIG --work-dir DIR`` plus ``checkpoint``
  (→ ``--checkpoint``: backbone weights), ``cfg_options`` (dict → ``--cfg-options k=v``), ``args`` (more options),
  ``seeds`` (``'shared'``: run once, see Seeds below), ``families`` (the backbone families it can run, e.g.
  ``['vit']`` for MAE: for a backbone of another family the stage and every stage that depends on it are left
  out, and said so).
  ``config`` is a path, or a dict {backbone: path} of each backbone's own config (``'*'``: any other backbone).
* ``test``: ``tools/test.py CONFIG WEIGHTS --work-dir DIR`` with ``weights`` (e.g. ``'{upernet.last_checkpoint}'``),
  ``tta`` (multi-scale + flip), ``checkpoint`` (the backbone weights the model was trained from, for result.json),
  ``cfg_options``, ``args``, ``seeds``.
* ``command``: ``argv`` (a ``.py`` script runs with this Python); ``creates``: a path whose existence means done.
* ``leaderboard``: ``runs`` (folders; default: the work dirs of the train / test stages it depends on), ``out``
  (file stem, default ``'{root}/leaderboard'``), ``formats`` (default ``['md', 'html']``), ``paper`` (default True),
  ``baseline`` (the row the others are compared with: a recipe label such as ``'scratch'``, or a backbone name;
  ``--baseline`` replaces it), ``expect`` (orderings the measured table must show, e.g.
  ``[dict(row='supervised', over='scratch', min_delta={'Flowers-102 top-1 (full)': 1.0})]``: the stage fails,
  after writing the leaderboard, when a paired Δ falls short; see ``vitbench.results.expectations``), ``figures``
  (PNG files other stages made, as glob patterns, e.g. ``'{root}/*/analysis/*.png'``: embedded in the HTML),
  ``benchmarks`` (``tools/benchmark.py --json`` records other stages wrote, e.g. ``'{root}/benchmark_paper/
  benchmark.json'``: their measured ratios beside the paper's, :mod:`vitbench.results.benchmark_record`).

``train`` and ``test`` stages run once per backbone (``per_backbone=True``; work dir ``WORK_DIR/BACKBONE/NAME``);
``command`` and ``leaderboard`` stages once (``WORK_DIR/NAME``). A per-backbone stage whose config is for another
backbone gets ``--backbone NAME`` (the one-option swap). Strings may use ``{backbone}``, ``{work_dir}`` (the
stage's own), ``{root}`` (the pipeline's) and ``{STAGE}`` / ``{STAGE.last_checkpoint}`` of a stage it depends on
(the same backbone's instance).

Seeds: with ``seeds`` (or ``--seeds 0,1,2``, which replaces it) every ``train`` / ``test`` stage runs once per seed,
with ``--cfg-options randomness.seed=K`` (after the stage's own ``cfg_options``; mmengine seeds its samplers' data
order from it), as stage ``BACKBONE/NAME/seedK`` in ``WORK_DIR/BACKBONE/NAME/seedK``. With one seed the stage keeps
the plain id and folder and still gets ``randomness.seed``; with no ``seeds`` at all nothing is added. Seed K of
a stage depends on, and its ``{STAGE}`` references mean, seed K of a seeded dependency. A stage with
``seeds='shared'`` runs once (with the first seed, plain id and folder) and every seed of its dependents uses
that one instance (e.g. a teacher trained once). ``command`` and ``leaderboard`` stages are never seeded. A stage
that runs once depends on every seed of its dependencies (a leaderboard's default ``runs`` hold all their work
dirs) and may not refer to a stage that runs once per seed. The run itself is :mod:`harness.pipeline.run`.

This module reads the config and checks its top-level keys; each stage's keys and the graph are checked in
:mod:`.validate`, the stage instances made in :mod:`.expand` (of the types in :mod:`.dag`), and each train / test
stage's config picked and digested in :mod:`.stage_config`.
"""
import os.path as osp
from typing import Dict, List, Optional

from mmengine.config import Config

from harness.tasks import ImportsError, load_tasks

from .dag import Pipeline, PipelineError, Stage  # noqa: F401 (callers import them from here)
from .expand import expand_stages, stages_left_out
from .resources import SLURM_KEYS, ResourceError, check_executor, check_resources
from .stage_config import bind_config
from .validate import check_backbones, check_graph, check_seeds, check_stage, why_unwritable

_TOP_KEYS = ('work_dir', 'backbones', 'launcher', 'jobs', 'seeds', 'stages', 'executor', 'slurm', 'imports')


def load_pipeline(path: str, backbones: Optional[List[str]] = None, launcher: Optional[List[str]] = None,
                  work_dir: Optional[str] = None, seeds: Optional[List[int]] = None,
                  baseline: Optional[str] = None, executor: Optional[str] = None,
                  slurm: Optional[dict] = None, imports: Optional[List[str]] = None) -> Pipeline:
    """Read and check a pipeline config; ``backbones``, ``launcher`` (``[]``: none), ``work_dir``, ``seeds``, the
    leaderboard stages' ``baseline`` and the ``executor`` replace its own, ``slurm`` its Slurm defaults' keys;
    ``imports`` are added to its own, and all are imported (with the suite's task records) before its stages are
    read."""
    if not osp.isfile(path):
        raise PipelineError(f"pipeline config '{path}' not found (e.g. configs/pipelines/demo.py)")
    try:
        cfg = Config.fromfile(path, import_custom_modules=False)
    except Exception as e:  # syntax errors, bad _base_, ...
        raise PipelineError(f"pipeline config '{path}' could not be read: {type(e).__name__}: {e}") from e
    return pipeline_from(cfg, path, backbones, launcher, work_dir, seeds, baseline, executor, slurm, imports)


def pipeline_from(cfg, path: str, backbones: Optional[List[str]] = None, launcher: Optional[List[str]] = None,
                  work_dir: Optional[str] = None, seeds: Optional[List[int]] = None,
                  baseline: Optional[str] = None, executor: Optional[str] = None,
                  slurm: Optional[dict] = None, imports: Optional[List[str]] = None) -> Pipeline:
    """What :func:`load_pipeline` does once the file is read: check ``cfg`` (the config's keys as a mapping: a
    pipeline built in code, e.g. a paper table's, :mod:`.paper_table`) and make its stages; ``path`` names it in
    every message (and in the commands the pipeline prints, e.g. ``--table thesis:6.12``)."""
    unknown = [k for k in cfg.keys() if k not in _TOP_KEYS and not k.startswith('_')]
    if unknown:
        raise PipelineError(f'{path}: unknown key(s) {unknown}; a pipeline config has {_TOP_KEYS} '
                            '(helper variables: start their names with _)')
    imports = _imports(path, cfg.get('imports'), imports or [])
    work_dir = work_dir or cfg.get('work_dir')
    if not isinstance(work_dir, str) or not work_dir:
        raise PipelineError(f"{path}: missing key 'work_dir' (the folder the stages work in, e.g. 'work_dirs/demo')")
    unwritable = why_unwritable(work_dir)
    if unwritable:
        raise PipelineError(f'{path}: the work dir {work_dir} cannot be created or written: {unwritable}; '
                            'choose another (--work-dir DIR)')
    specs = cfg.get('stages')
    if not isinstance(specs, list) or not specs:
        raise PipelineError(f"{path}: missing key 'stages' (a list of dict(name=..., config=..., depends_on=[...]))")
    specs = [check_stage(path, i, s) for i, s in enumerate(specs)]
    if baseline is not None:  # '' drops the config's
        for spec in specs:
            if spec['kind'] == 'leaderboard':
                spec['baseline'] = baseline
    by_name = {}
    for spec in specs:
        if spec['name'] in by_name:
            raise PipelineError(f"{path}: two stages are named '{spec['name']}'")
        by_name[spec['name']] = spec
    check_graph(path, specs, by_name)

    declared = cfg.get('backbones') or []
    chosen = list(backbones) if backbones else list(declared)
    if any(s['per_backbone'] for s in specs):
        if not chosen:
            raise PipelineError(f"{path}: missing key 'backbones' (the backbone variants the per-backbone stages "
                                'run for), or pass --backbones')
        check_backbones(path, chosen)
    if launcher is None:
        launcher = cfg.get('launcher') or []
        if not (isinstance(launcher, list) and all(isinstance(a, str) for a in launcher)):
            raise PipelineError(f"{path}: key 'launcher' is {launcher!r}, expected a command prefix as a list, "
                                "e.g. ['torchrun', '--nproc_per_node', '8']")
    jobs = cfg.get('jobs', 1)
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise PipelineError(f"{path}: key 'jobs' is {jobs!r}, expected a whole number >= 1 (stages run at once)")
    if seeds is not None:
        seeds = check_seeds('--seeds', seeds)
    elif cfg.get('seeds') is not None:
        seeds = check_seeds(f"{path}: key 'seeds'", cfg['seeds'])
    seeds = seeds or []
    left_out = stages_left_out(path, specs, by_name, chosen)
    try:
        executor = check_executor(f"{path}: key 'executor'" if executor is None else '--executor',
                                  cfg.get('executor', 'local') if executor is None else executor)
        slurm = {**check_resources(f"{path}: key 'slurm'", cfg.get('slurm'), SLURM_KEYS), **(slurm or {})}
    except ResourceError as e:
        raise PipelineError(str(e)) from None
    pipeline = Pipeline(path, work_dir, chosen, expand_stages(path, work_dir, specs, by_name, chosen, seeds, left_out),
                        list(launcher), jobs, seeds, [why for why in left_out.values()], executor, slurm,
                        imports=imports)
    configs: Dict[str, dict] = {}
    for stage in pipeline.stages:
        if stage.kind in ('train', 'test'):
            bind_config(path, stage, configs)
    return pipeline


def _imports(path: str, own, added: List[str]) -> List[str]:
    """The config's ``imports`` and ``added`` (``--imports``), imported now: a task's record, a family's variants."""
    if own is not None and not (isinstance(own, list) and all(isinstance(m, str) and m for m in own)):
        raise PipelineError(f"{path}: key 'imports' is {own!r}, expected a list of module names on PYTHONPATH, "
                            "e.g. ['my_task']")
    try:
        load_tasks(own or [], f"{path}: key 'imports':")
        load_tasks(added, '--imports')
    except ImportsError as e:
        raise PipelineError(str(e)) from None
    return list(dict.fromkeys([*(own or []), *added]))
