"""A benchmark pipeline: a declared DAG of stages (pretrain → downstream → leaderboard), checked before it runs.

A pipeline config is an mmengine ``Config`` python file::

    work_dir = 'work_dirs/demo'            # every stage works in a folder under it
    backbones = ['vit_demo_patch8_64']     # per-backbone stages run once for each (--backbones replaces it)
    launcher = None                        # or e.g. ['torchrun', '--nproc_per_node', '8'] (--launcher replaces it)
    jobs = 1                               # stages run at the same time when their dependencies allow (--jobs)
    seeds = [0, 1, 2]                      # optional: every train / test stage runs once per seed (--seeds)
    executor = 'local'                     # or 'slurm': each stage one Slurm job, with the `slurm` defaults and
                                           # each stage's `resources` (vitbench/pipeline/resources.py)
    stages = [
        dict(name='data', kind='command', argv=['tools/make_demo_data.py', '--out', 'data/demo']),
        dict(name='mae', config='configs/demo/mae_demo.py', depends_on=['data'], outputs=['backbone.pth']),
        dict(name='upernet_mae', config='configs/demo/upernet_demo.py', depends_on=['mae'],
             checkpoint='{mae}/backbone.pth'),
        dict(name='leaderboard', kind='leaderboard', depends_on=['upernet_mae'], baseline='scratch'),
    ]

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
  (PNG files other stages made, as glob patterns, e.g. ``'{root}/*/analysis/*.png'``: embedded in the HTML).

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
dirs) and may not refer to a stage that runs once per seed. The run itself is :mod:`vitbench.pipeline.run`.
"""
import hashlib
import json
import os
import os.path as osp
import re
import string
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from mmengine.config import Config

from vitbench.console import config_path
from vitbench.results.expectations import expectations_from

from .resources import SLURM_KEYS, ResourceError, check_executor, check_resources

STAGE_KINDS = ('train', 'test', 'command', 'leaderboard')
_COMMON_KEYS = ('name', 'kind', 'depends_on', 'per_backbone', 'metric', 'outputs', 'resources')
_KIND_KEYS = {
    'train': ('config', 'checkpoint', 'cfg_options', 'args', 'seeds', 'families'),
    'test': ('config', 'weights', 'tta', 'checkpoint', 'cfg_options', 'args', 'seeds', 'families'),
    'command': ('argv', 'creates'),
    'leaderboard': ('runs', 'out', 'formats', 'paper', 'baseline', 'expect', 'figures'),
}
_SEEDED_KINDS = ('train', 'test')
_TOP_KEYS = ('work_dir', 'backbones', 'launcher', 'jobs', 'seeds', 'stages', 'executor', 'slurm')
_BUILTIN_FIELDS = ('backbone', 'work_dir', 'root')
_STAGE_ATTRS = ('', '.last_checkpoint')
_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


class PipelineError(ValueError):
    """A pipeline config that cannot run; the message names the file, the stage and the key."""


@dataclass
class Stage:
    """One stage instance: a declared stage, for one backbone when it runs per backbone, for one seed when it
    runs per seed."""
    id: str  # 'NAME', 'BACKBONE/NAME', 'BACKBONE/NAME/seedK' (or 'NAME/seedK')
    name: str
    kind: str
    spec: dict
    work_dir: str
    backbone: Optional[str] = None  # the backbone of a per-backbone instance
    seed: Optional[int] = None  # the randomness.seed it runs with (None: the config's own)
    deps: List[str] = field(default_factory=list)  # ids
    refs: Dict[str, str] = field(default_factory=dict)  # template name -> id of the stage it means
    config: Optional[str] = None  # train / test
    swap: Optional[str] = None  # --backbone to pass (None: the config's own backbone)
    task: Optional[str] = None  # experiment.task of the config
    config_digest: Optional[str] = None  # sha256 of what the config holds, _base_ files merged (record.py)


@dataclass
class Pipeline:
    path: str
    work_dir: str
    backbones: List[str]
    stages: List[Stage]  # in run order: every stage after its dependencies
    launcher: List[str] = field(default_factory=list)  # prefix of train / test commands (torchrun ...)
    jobs: int = 1  # stages run at the same time
    seeds: List[int] = field(default_factory=list)  # [] when none are given: the configs' own seeds
    left_out: List[str] = field(default_factory=list)  # per-backbone stages a backbone's family cannot run, why
    executor: str = 'local'  # or 'slurm' (vitbench/pipeline/slurm.py)
    slurm: dict = field(default_factory=dict)  # the stages' default Slurm resources (resources.py)
    vis_backends: List[str] = field(default_factory=list)  # --vis-backend of train stages; no part of their recipe

    def stage(self, stage_id: str) -> Stage:
        return next(s for s in self.stages if s.id == stage_id)


def load_pipeline(path: str, backbones: Optional[List[str]] = None, launcher: Optional[List[str]] = None,
                  work_dir: Optional[str] = None, seeds: Optional[List[int]] = None,
                  baseline: Optional[str] = None, executor: Optional[str] = None,
                  slurm: Optional[dict] = None) -> Pipeline:
    """Read and check a pipeline config; ``backbones``, ``launcher`` (``[]``: none), ``work_dir``, ``seeds``, the
    leaderboard stages' ``baseline`` and the ``executor`` replace its own, ``slurm`` its Slurm defaults' keys."""
    if not osp.isfile(path):
        raise PipelineError(f"pipeline config '{path}' not found (e.g. configs/pipelines/demo.py)")
    try:
        cfg = Config.fromfile(path, import_custom_modules=False)
    except Exception as e:  # syntax errors, bad _base_, ...
        raise PipelineError(f"pipeline config '{path}' could not be read: {type(e).__name__}: {e}") from e
    unknown = [k for k in cfg.keys() if k not in _TOP_KEYS and not k.startswith('_')]
    if unknown:
        raise PipelineError(f'{path}: unknown key(s) {unknown}; a pipeline config has {_TOP_KEYS} '
                            '(helper variables: start their names with _)')
    work_dir = work_dir or cfg.get('work_dir')
    if not isinstance(work_dir, str) or not work_dir:
        raise PipelineError(f"{path}: missing key 'work_dir' (the folder the stages work in, e.g. 'work_dirs/demo')")
    unwritable = _unwritable(work_dir)
    if unwritable:
        raise PipelineError(f'{path}: the work dir {work_dir} cannot be created or written: {unwritable}; '
                            'choose another (--work-dir DIR)')
    specs = cfg.get('stages')
    if not isinstance(specs, list) or not specs:
        raise PipelineError(f"{path}: missing key 'stages' (a list of dict(name=..., config=..., depends_on=[...]))")
    specs = [_check_stage(path, i, s) for i, s in enumerate(specs)]
    if baseline is not None:  # '' drops the config's
        for spec in specs:
            if spec['kind'] == 'leaderboard':
                spec['baseline'] = baseline
    by_name = {}
    for spec in specs:
        if spec['name'] in by_name:
            raise PipelineError(f"{path}: two stages are named '{spec['name']}'")
        by_name[spec['name']] = spec
    _check_graph(path, specs, by_name)

    declared = cfg.get('backbones') or []
    chosen = list(backbones) if backbones else list(declared)
    if any(s['per_backbone'] for s in specs):
        if not chosen:
            raise PipelineError(f"{path}: missing key 'backbones' (the backbone variants the per-backbone stages "
                                'run for), or pass --backbones')
        _check_backbones(path, chosen)
    if launcher is None:
        launcher = cfg.get('launcher') or []
        if not (isinstance(launcher, list) and all(isinstance(a, str) for a in launcher)):
            raise PipelineError(f"{path}: key 'launcher' is {launcher!r}, expected a command prefix as a list, "
                                "e.g. ['torchrun', '--nproc_per_node', '8']")
    jobs = cfg.get('jobs', 1)
    if not (isinstance(jobs, int) and not isinstance(jobs, bool) and jobs >= 1):
        raise PipelineError(f"{path}: key 'jobs' is {jobs!r}, expected a whole number >= 1 (stages run at once)")
    if seeds is not None:
        seeds = _check_seeds('--seeds', seeds)
    elif cfg.get('seeds') is not None:
        seeds = _check_seeds(f"{path}: key 'seeds'", cfg['seeds'])
    seeds = seeds or []
    left_out = _left_out(path, specs, by_name, chosen)
    try:
        executor = check_executor(f"{path}: key 'executor'" if executor is None else '--executor',
                                  cfg.get('executor', 'local') if executor is None else executor)
        slurm = {**check_resources(f"{path}: key 'slurm'", cfg.get('slurm'), SLURM_KEYS), **(slurm or {})}
    except ResourceError as e:
        raise PipelineError(str(e)) from None
    pipeline = Pipeline(path, work_dir, chosen, _expand(path, work_dir, specs, by_name, chosen, seeds, left_out),
                        list(launcher), jobs, seeds, [why for why in left_out.values()], executor, slurm)
    configs: Dict[str, dict] = {}
    for stage in pipeline.stages:
        if stage.kind in ('train', 'test'):
            _bind_config(path, stage, configs)
    return pipeline


# ---------------------------------------------------------------------------------------------- checks

def _unwritable(folder: str) -> Optional[str]:
    """Why ``folder`` could not be created or written in (None if it can), told without creating it (a dry run
    writes nothing): otherwise the first stage would stop on it with a traceback."""
    existing = osp.abspath(folder)
    while not osp.exists(existing):
        existing = osp.dirname(existing)
    if not osp.isdir(existing):
        return f'{existing} is a file, not a folder'
    if not os.access(existing, os.W_OK | os.X_OK):
        return f'{existing} is not writable'
    return None


def _check_stage(path: str, index: int, spec) -> dict:
    where = f'{path}: stages[{index}]'
    if not isinstance(spec, dict):
        raise PipelineError(f'{where}: expected a dict(name=..., ...), got {spec!r}')
    spec = dict(spec)
    name = spec.get('name')
    if not isinstance(name, str) or not _NAME.match(name):
        raise PipelineError(f"{where}: key 'name' is {name!r}, expected a name of letters, digits and _ "
                            '(it is used in {NAME} references)')
    where = f"{path}: stage '{name}'"
    kind = spec.setdefault('kind', 'train' if 'config' in spec else None)
    if kind not in STAGE_KINDS:
        raise PipelineError(f"{where}: key 'kind' is {kind!r}, expected one of {STAGE_KINDS} "
                            "(a stage with a 'config' is 'train' by default)")
    allowed = _COMMON_KEYS + _KIND_KEYS[kind]
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise PipelineError(f'{where}: unknown key(s) {unknown} for a {kind} stage; expected {allowed}')
    spec.setdefault('per_backbone', kind in ('train', 'test'))
    spec['depends_on'] = list(spec.get('depends_on') or [])
    _expect(where, spec, 'per_backbone', bool, 'True or False')
    _expect_list(where, spec, 'depends_on')
    _expect_list(where, spec, 'outputs')
    _expect(where, spec, 'metric', str, 'a metric name of result.json, e.g. mIoU')
    try:
        spec['resources'] = check_resources(f"{where}: key 'resources'", spec.get('resources'))
    except ResourceError as e:
        raise PipelineError(str(e)) from None
    if kind in ('train', 'test'):
        config = spec.get('config')
        if isinstance(config, dict):
            if not config or not all(isinstance(k, str) and isinstance(v, str) for k, v in config.items()):
                raise PipelineError(f"{where}: key 'config' is {config!r}, expected a path or a dict "
                                    "{backbone: path} ('*': any other backbone)")
            if not spec['per_backbone']:
                raise PipelineError(f"{where}: key 'config' is a dict of backbones but the stage runs once "
                                    '(per_backbone=False); give one path')
        elif not isinstance(config, str):
            raise PipelineError(f"{where}: missing key 'config' (an mmengine config file)")
        _expect(where, spec, 'checkpoint', str, 'a path to backbone weights, e.g. "{mae}/backbone.pth"')
        _expect_list(where, spec, 'args')
        options = spec.get('cfg_options')
        if options is not None:
            if not isinstance(options, dict):
                raise PipelineError(f"{where}: key 'cfg_options' is {options!r}, expected a dict "
                                    "{'dotted.key': value}")
            for key, value in options.items():
                if isinstance(value, dict):
                    raise PipelineError(f"{where}: cfg_options['{key}'] is a dict; give its dotted keys "
                                        f"('{key}.sub_key': value) as --cfg-options takes them")
    if kind == 'test':
        _expect(where, spec, 'weights', str, 'the model checkpoint to test, e.g. "{upernet.last_checkpoint}"')
        if 'weights' not in spec:
            raise PipelineError(f"{where}: missing key 'weights' (the checkpoint to test, e.g. "
                                "'{upernet.last_checkpoint}')")
        _expect(where, spec, 'tta', bool, 'True or False')
    if kind in _SEEDED_KINDS and spec.get('seeds', 'shared') != 'shared':
        raise PipelineError(f"{where}: key 'seeds' is {spec['seeds']!r}, expected 'shared' (the stage runs once, "
                            'with the first seed, for all seeds of its dependents); leave it out to run once per seed')
    if kind == 'command':
        if not isinstance(spec.get('argv'), list) or not spec['argv']:
            raise PipelineError(f"{where}: missing key 'argv' (the command as a list, e.g. "
                                "['tools/make_demo_data.py', '--out', 'data/demo'])")
        _expect_list(where, spec, 'argv')
        _expect(where, spec, 'creates', str, 'a path')
    if kind == 'leaderboard':
        spec.setdefault('out', '{root}/leaderboard')
        spec.setdefault('formats', ['md', 'html'])
        _expect_list(where, spec, 'runs')
        _expect(where, spec, 'out', str, 'a file path without extension')
        _expect_list(where, spec, 'formats')
        bad = [f for f in spec['formats'] if f not in ('md', 'csv', 'html')]
        if bad or not spec['formats']:
            raise PipelineError(f"{where}: key 'formats' is {spec['formats']!r}, expected some of md, csv, html")
        _expect(where, spec, 'paper', bool, 'True or False')
        _expect(where, spec, 'baseline', str, "the name of the row to compare with, e.g. 'scratch' or a backbone")
        _expect_list(where, spec, 'figures')
        if spec.get('expect') is not None:
            try:
                expectations_from(spec['expect'], where)
            except ValueError as e:
                raise PipelineError(str(e)) from None
    return spec


def _expect(where, spec, key, kind, what):
    if spec.get(key) is not None and not isinstance(spec[key], kind):
        raise PipelineError(f"{where}: key '{key}' is {spec[key]!r}, expected {what}")


def _expect_list(where, spec, key):
    value = spec.get(key)
    if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise PipelineError(f"{where}: key '{key}' is {value!r}, expected a list of strings")


def _template_fields(text: str, where: str) -> List[str]:
    """The names a string refers to: '{mae}/backbone.pth' → ['mae']; checks the attribute part."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as e:
        raise PipelineError(f'{where}: {text!r}: {e} (write literal braces as {{{{ }}}})') from e
    names = []
    for _, field_name, _, _ in parsed:
        if field_name is None:
            continue
        base = re.split(r'[.\[]', field_name, 1)[0]
        if field_name[len(base):] not in _STAGE_ATTRS:
            raise PipelineError(f'{where}: {{{field_name}}} in {text!r}: a stage reference is {{STAGE}} or '
                                '{STAGE.last_checkpoint}')
        names.append(base)
    return names


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)


def _references(spec: dict, where: str) -> List[str]:
    names = []
    for key in ('checkpoint', 'weights', 'cfg_options', 'args', 'argv', 'creates', 'runs', 'out'):
        for text in _strings(spec.get(key)):
            names += [n for n in _template_fields(text, f'{where} key {key!r}') if n not in names]
    return names


def _check_graph(path: str, specs: List[dict], by_name: Dict[str, dict]) -> None:
    for spec in specs:
        where = f"{path}: stage '{spec['name']}'"
        for dep in spec['depends_on']:
            if dep not in by_name:
                raise PipelineError(f"{where}: depends_on names '{dep}', which is no stage of this pipeline "
                                    f'(stages: {", ".join(by_name)})')
            if dep == spec['name']:
                raise PipelineError(f'{where}: depends on itself')
        for name in _references(spec, where):
            if name in _BUILTIN_FIELDS:
                continue
            if name not in by_name:
                raise PipelineError(f"{where}: refers to {{{name}}}, which is no stage of this pipeline "
                                    f'(stages: {", ".join(by_name)}; also {", ".join(_BUILTIN_FIELDS)})')
            if name not in spec['depends_on']:
                raise PipelineError(f"{where}: uses {{{name}}} but does not depend on '{name}': add it to "
                                    'depends_on')
            if by_name[name]['per_backbone'] and not spec['per_backbone']:
                raise PipelineError(f"{where}: runs once but refers to {{{name}}}, which runs per backbone")
    state: Dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name, trail):
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = trail[trail.index(name):] + [name]
            raise PipelineError(f'{path}: the stages depend on each other in a cycle: {" -> ".join(cycle)}')
        state[name] = 1
        for dep in by_name[name]['depends_on']:
            visit(dep, trail + [name])
        state[name] = 2

    for spec in specs:
        visit(spec['name'], [])


def _check_seeds(where: str, seeds) -> List[int]:
    # numpy's and torch's generators take 0 <= seed < 2**32; a seed given twice would be one run done twice
    if not (isinstance(seeds, list) and seeds and all(isinstance(s, int) and not isinstance(s, bool)
                                                      and 0 <= s < 2 ** 32 for s in seeds)):
        raise PipelineError(f'{where} is {seeds!r}, expected a non-empty list of whole numbers from 0 to 2**32 - 1, '
                            'e.g. [0, 1, 2]')
    twice = [s for i, s in enumerate(seeds) if s in seeds[:i]]
    if twice:
        raise PipelineError(f'{where} is {seeds!r}: seed {twice[0]} is given twice, expected distinct seeds')
    return list(seeds)


def _check_backbones(path: str, names: List[str]) -> None:
    from backbones.factory import family_of
    for name in names:
        try:
            family_of(name)  # a named variant, or timm:NAME
        except KeyError as e:
            raise PipelineError(f'{path}: backbones: {e.args[0]}') from e


# ---------------------------------------------------------------------------------------------- expansion

def _left_out(path, specs, by_name, backbones) -> Dict[Tuple[str, str], str]:
    """{(stage name, backbone): why} for the per-backbone stages a backbone cannot run: those whose
    ``families`` leave out the backbone's family (e.g. MAE needs a ViT), and everything that depends on one."""
    from backbones.factory import family_of, list_models
    known = sorted({family_of(name) for name in list_models()} | {'timm'})
    for spec in specs:
        families = spec.get('families')
        if families is not None and not (isinstance(families, list) and families and set(families) <= set(known)):
            raise PipelineError(f"{path}: stage '{spec['name']}': key 'families' is {families!r}, expected a list "
                                f'of backbone families from {known}')
    out: Dict[Tuple[str, str], str] = {}
    for backbone in backbones:
        family = family_of(backbone)
        changed = True
        while changed:  # until every dependent of a left-out stage is left out too
            changed = False
            for spec in (s for s in specs if s['per_backbone'] and (s['name'], backbone) not in out):
                if spec.get('families') and family not in spec['families']:
                    out[spec['name'], backbone] = (f"{backbone}/{spec['name']}: left out, it runs on "
                                                   f"{' / '.join(spec['families'])} backbones, not {family}")
                else:
                    missing = [d for d in spec['depends_on'] if (d, backbone) in out]
                    if missing:
                        out[spec['name'], backbone] = (f"{backbone}/{spec['name']}: left out, it needs "
                                                       f"{backbone}/{missing[0]}")
                changed |= (spec['name'], backbone) in out
    return out


def _expand(path, root, specs, by_name, backbones, seeds, left_out) -> List[Stage]:
    instances: List[Stage] = []

    def seeds_of(spec):
        """(randomness.seed, id suffix) of each of a stage's instances; one seed keeps the plain id and folder."""
        if not seeds or spec['kind'] not in _SEEDED_KINDS:
            return [(None, None)]
        if spec.get('seeds') == 'shared' or len(seeds) == 1:
            return [(seeds[0], None)]
        return [(k, f'seed{k}') for k in seeds]

    def ids_of(name, backbone, suffix):
        """The instances of stage ``name`` that an instance for ``backbone`` and seed ``suffix`` means: the same
        backbone's and seed's where both vary by them, else all of them."""
        spec = by_name[name]
        chosen = [b for b in ([backbone] if backbone else backbones) if (name, b) not in left_out]
        suffixes = [s for _, s in seeds_of(spec)]
        return [_stage_id(b, name, s) for b in (chosen if spec['per_backbone'] else [None])
                for s in ([suffix] if suffix and len(suffixes) > 1 else suffixes)]

    for spec in specs:
        name = spec['name']
        for backbone in (backbones if spec['per_backbone'] else [None]):
            if (name, backbone) in left_out:
                continue
            for seed, suffix in seeds_of(spec):
                stage_id = _stage_id(backbone, name, suffix)
                stage = Stage(id=stage_id, name=name, kind=spec['kind'], spec=spec, backbone=backbone, seed=seed,
                              work_dir=osp.join(root, *stage_id.split('/')))  # the folder mirrors the id
                stage.deps = [i for dep in spec['depends_on'] for i in ids_of(dep, backbone, suffix)]
                for ref in (n for n in _references(spec, path) if n in by_name):
                    meant = ids_of(ref, backbone, suffix)
                    if len(meant) > 1:  # an unseeded stage referring to a per-seed one: which seed's?
                        raise PipelineError(f"{path}: stage '{name}': runs once for all seeds (a command or "
                                            f"leaderboard stage, or seeds='shared') but refers to {{{ref}}}, which "
                                            f"runs once per seed; give '{ref}' seeds='shared' to run it once")
                    stage.refs[ref] = meant[0]
                instances.append(stage)
    # run order: dependencies first, otherwise as declared (stage by stage, backbone by backbone, seed by seed)
    position = {s.id: i for i, s in enumerate(instances)}
    done, ordered = set(), []
    while len(ordered) < len(instances):
        ready = min((s for s in instances if s.id not in done and all(d in done for d in s.deps)),
                    key=lambda s: position[s.id])
        done.add(ready.id)
        ordered.append(ready)
    return ordered


def _stage_id(backbone: Optional[str], name: str, seed_suffix: Optional[str]) -> str:
    # timm:NAME -> timm-NAME: the id is also a folder, and a colon would make its relative links URLs
    return '/'.join(filter(None, (backbone and backbone.replace(':', '-'), name, seed_suffix)))


def _bind_config(path: str, stage: Stage, cache: Dict[str, dict]) -> None:
    """Pick the stage's config for its backbone, check it records a result, decide the --backbone swap."""
    where = f"{path}: stage '{stage.name}'"
    config = stage.spec['config']
    if isinstance(config, dict):
        config = config.get(stage.backbone, config.get('*'))
        if config is None:
            raise PipelineError(f"{where}: key 'config' has no entry for backbone '{stage.backbone}' (it has "
                                f"{sorted(stage.spec['config'])}; add it, or '*' for any other backbone)")
    config = config_path(config)  # from the working directory, else shipped with vitbench (configs/demo/... anywhere)
    if config not in cache:
        if not osp.isfile(config):
            raise PipelineError(f"{where}: config file '{config}' not found")
        try:
            cfg = Config.fromfile(config, import_custom_modules=False)
        except Exception as e:
            raise PipelineError(f"{where}: config file '{config}' could not be read: {type(e).__name__}: {e}") from e
        experiment = cfg.get('experiment') or {}
        missing = [k for k in ('task', 'dataset', 'backbone') if not experiment.get(k)]
        if missing:
            raise PipelineError(f"{where}: config '{config}' has no experiment {missing}: without them the run "
                                'writes no result.json and the pipeline cannot tell that the stage finished')
        # the values, not the text: a comment or a reformatting is no change of recipe
        content = json.dumps(cfg.to_dict(), sort_keys=True, default=_by_name)
        cache[config] = dict(experiment=dict(experiment), digest=hashlib.sha256(content.encode()).hexdigest())
    experiment = cache[config]['experiment']
    stage.config, stage.task, stage.config_digest = config, experiment['task'], cache[config]['digest']
    if stage.backbone and stage.backbone != experiment['backbone']:
        stage.swap = stage.backbone


def _by_name(value) -> str:
    """What JSON cannot write (a class or function of a lazy-import config): its name, which is the same in every
    run, never its repr, which may hold its address."""
    return f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__qualname__)}"
