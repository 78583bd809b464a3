"""One paper table as a pipeline: ``tools/pipeline.py --table thesis:6.12`` runs the table's runnable rows as the map
of the papers (:mod:`vitbench.results.paper_map`) gives them, and ends with a leaderboard of them.

The pipeline is the dict a pipeline config file would hold (:func:`table_config`), checked and expanded by
:func:`harness.pipeline.spec.pipeline_from` like any other, so it runs, resumes, dry-runs and goes to Slurm the same
way. Its stages:

* one ``train`` stage per way a row runs (:func:`~vitbench.results.paper_map.row_runs`): the row's config, its
  ``cfg_options``, and ``--backbone`` where the map swaps the backbone; named after the config
  (``upernet_deit3_s``), with what the run changes (``cait_s24_in1k_400e__distillation_None``, ``..._on_VARIANT``,
  and ``..._from_PRETRAINING`` where the table runs the config after several pre-trainings);
* one pre-training stage per config (with its ``cfg_options``) the rows' ``needs`` name (once for every row that
  needs it, or the row's own stage where a row of the table runs that config with the same options); the rows that
  need it depend on it and start from its ``backbone.pth`` (``--checkpoint``). Rows that need nothing are
  independent stages;
* one ``test`` stage per row run with ``test: true`` (a model evaluated, not trained: thesis Figure 5.4's
  models at other test resolutions): ``tools/test.py CONFIG`` with its ``cfg_options`` on the last checkpoint of
  the stage that runs its ``needs``, after it (``test_`` and the config's name);
* likewise one stage per ``teacher`` config: the rows that distil from it depend on it and get its exported model
  as their distillation teacher (``--teacher STAGE/backbone.pth``);
* one ``command`` stage per distinct ``benchmark`` spec of the rows (a throughput / memory row, measured and not
  trained): ``tools/benchmark.py MODE ... --json WORK_DIR/benchmark_MODE/benchmark.json``;
* one ``command`` stage per entry of the table's ``prepare`` (``prepare_<file stem>``: a file its trainings read
  that a tool makes, BEiT's k-means tokenizer), which every training stage depends on; done when the file exists;
* ``leaderboard``: over all of them, with the paper tables (the table itself, where the board shows it: its id
  in ``vitbench/results/papers/board.yaml``), so the measured cells read ``value (paper X, Δ d)``, and the
  benchmark records' ratios beside the paper's.

Rows run once each (not per backbone): a row names its backbone. ``--table`` takes ``DOCUMENT:NUMBER`` as
``docs/coverage.md`` lists it (``thesis:6.12``, ``maelite:Figure 7``) or the table's leaderboard id
(``deit3_ade20k``); a table printed again by another document (``same_as``) runs its home's rows. A table with no
runnable row, and an unknown id, are refused in one line (the latter with the close ids).
"""
import difflib
import json
import os.path as osp
import re
import shlex
from typing import Dict, List, Optional, Tuple

from vitbench.results.experiment import experiment_options
from vitbench.results.paper import PAPER_RESULTS
from vitbench.results.paper_map import (DOCUMENTS, MapTable, Run, load_map, row_benchmark, row_runnable,
                                        row_runs)
from vitbench.results.result_file import LeaderboardError
from vitbench.yaml_file import read_yaml

from .dag import Pipeline, PipelineError
from .spec import pipeline_from
from .validate import check_backbones

WORK_DIRS = 'work_dirs/tables'  # each table's default work dir: WORK_DIRS/DOCUMENT_NUMBER
# the paper configs' batch sizes assume one 8-GPU node, as configs/pipelines/paper_*.py (--launcher to change)
LAUNCHER = ['torchrun', '--nproc_per_node', '8']


def find_table(table_id: str, tables: Optional[List[MapTable]] = None) -> MapTable:
    """The map's entry for ``DOCUMENT:NUMBER`` or a leaderboard id (any case); a ``same_as`` entry's home."""
    tables = load_map() if tables is None else tables
    keys: Dict[str, MapTable] = {t.key: t for t in tables}
    keys.update({t.id: t for t in tables if t.id})
    by_lower = {k.lower(): t for k, t in keys.items()}
    table = by_lower.get(' '.join(table_id.split()).lower())
    if table is None:
        close = difflib.get_close_matches(table_id.lower(), list(by_lower), n=5, cutoff=0.6)
        names = [next(k for k in keys if k.lower() == c) for c in close]
        hint = f'close: {", ".join(names)}' if names else f'the documents are {", ".join(DOCUMENTS)}'
        raise PipelineError(f'--table {table_id!r}: no such table in the map of the papers (DOCUMENT:NUMBER as '
                            f'docs/coverage.md lists them, e.g. thesis:6.12, or a leaderboard id); {hint}')
    return keys[table.same_as] if table.same_as else table


def _board_ids() -> List[str]:
    data = read_yaml(PAPER_RESULTS, LeaderboardError)
    return list(data.get('board') or []) if isinstance(data, dict) else []


def table_stages(table: MapTable) -> List[Tuple[dict, List[str]]]:
    """The stages of a table (as a pipeline config's ``stages`` holds them, leaderboard last), each with the models
    of the rows it runs ([] for a pre-training stage that no row of the table is)."""
    twice = {m for m in (r['model'] for r in table.rows) if sum(r['model'] == m for r in table.rows) > 1}
    runs: List[Tuple[str, Run]] = [(f"{row['model']} ({row['pretrain']})" if row['model'] in twice
                                    and row.get('pretrain') else row['model'], run)
                                   for row in table.rows for run in row_runs(row)]
    benches = benchmark_stages(table)
    if not runs and not benches:
        state = table.state or 'none'
        raise PipelineError(f'--table {table.key} ({table.title}): no row of it runs here ({state}): '
                            f'{table.why or "no row names a config"}')
    names: set = set()

    def name_of(config: str, run: Optional[Run] = None) -> str:
        stem = ('test_' if run is not None and run.test else '') + osp.splitext(osp.basename(config))[0]
        if run is not None:  # what the run changes, in its name: cait_s24_in1k_400e__distillation_None
            stem += ''.join(f'__{k.rsplit(".", 1)[-1]}_{v}'
                            for k, v in experiment_options(run.cfg_options).items())  # not experiment.*
            stem += f'__on_{run.backbone}' if run.backbone else ''
        stem = re.sub(r'\W', '_', stem)
        base = stem if re.match(r'[A-Za-z_]', stem) else f'_{stem}'
        if base in names and run is not None and run.needs:  # the config after other pre-trainings
            base += '__from_' + re.sub(r'\W', '_', osp.splitext(osp.basename(run.needs))[0] + ''.join(
                f'__{k.rsplit(".", 1)[-1]}_{v}' for k, v in sorted(run.needs_options.items())))
        name, k = base, 2
        while name in names:
            name, k = f'{base}_{k}', k + 1
        names.add(name)
        return name

    stages: Dict[tuple, dict] = {}
    models: Dict[tuple, List[str]] = {}
    needs: Dict[tuple, Tuple[str, dict]] = {}
    teachers: Dict[tuple, Tuple[str, dict]] = {}
    for model, run in runs:
        key = (run.config, json.dumps(run.cfg_options, sort_keys=True), run.backbone, run.needs,
               json.dumps(run.needs_options, sort_keys=True), run.teacher,
               json.dumps(run.teacher_options, sort_keys=True), run.test)
        needs[key] = (run.needs, run.needs_options)
        if run.teacher:
            teachers[key] = (run.teacher, run.teacher_options)
        if key not in stages:  # two rows the same run (e.g. one config, two columns): one stage
            stages[key] = dict(name=name_of(run.config, run), config=run.config, per_backbone=False)
            if run.test:
                stages[key]['kind'] = 'test'
            if run.cfg_options:
                stages[key]['cfg_options'] = dict(run.cfg_options)
            if run.backbone:
                stages[key]['args'] = ['--backbone', run.backbone]
        models.setdefault(key, []).append(model)
    _merge_same_runs(stages, models, needs)
    pretrain: Dict[tuple, dict] = {}

    def provider(need: Tuple[str, dict], chain: Tuple[tuple, ...]) -> dict:
        """The stage whose backbone.pth a run needing ``need`` (a config and its cfg_options) starts from: a row of
        the table that runs that config with those options (after what it needs in its turn), else a pre-training
        stage of its own."""
        config, options = need
        which = (config, json.dumps(options, sort_keys=True))
        if which in chain:
            cycle = ' -> '.join(osp.basename(c) for c, _ in (*chain[chain.index(which):], which))
            raise PipelineError(f'--table {table.key}: the rows\' needs form a cycle: {cycle}')
        if which not in pretrain:
            own = next((k for k, s in stages.items() if s['config'] == config and s.get('kind') != 'test'
                        and (s.get('cfg_options') or {}) == options and not s.get('args')), None)
            if own is None:
                pretrain[which] = dict(name=name_of(config, Run(config, options) if options else None), config=config,
                                       per_backbone=False)
                if options:
                    pretrain[which]['cfg_options'] = dict(options)
            else:
                pretrain[which] = stages[own]
            pretrain[which]['outputs'] = ['backbone.pth']
            if own is not None and needs[own][0] and 'depends_on' not in stages[own]:
                depend(stages[own], needs[own], (*chain, which))  # transitive: that row needs a run of its own first
        return pretrain[which]

    def depend(stage: dict, need: Tuple[str, dict], chain: Tuple[tuple, ...]) -> None:
        name = provider(need, chain)['name']
        if stage.get('kind') == 'test':  # the whole model that stage trained, head and all
            stage.update(depends_on=[name], weights=f'{{{name}.last_checkpoint}}')
        else:
            stage.update(depends_on=[name], checkpoint=f'{{{name}}}/backbone.pth')

    for key, stage in list(stages.items()):
        if needs[key][0] and 'depends_on' not in stage:
            depend(stage, needs[key], ((stage['config'], json.dumps(stage.get('cfg_options') or {}, sort_keys=True)),))
    for key, teacher in teachers.items():  # the teacher's exported model is the student's --teacher file
        if key in stages:
            name = provider(teacher, ((stages[key]['config'],
                                       json.dumps(stages[key].get('cfg_options') or {}, sort_keys=True)),))['name']
            stages[key]['depends_on'] = [*stages[key].get('depends_on', []), name]
            stages[key]['args'] = [*stages[key].get('args', []), '--teacher', f'{{{name}}}/backbone.pth']
    out = [(s, []) for s in pretrain.values() if s not in stages.values()]
    out += [(stages[r], models[r]) for r in stages]
    taken = {s['name'] for s, _ in out}
    for stage, _ in benches:
        while stage['name'] in taken:
            stage['name'] += '_'
        taken.add(stage['name'])
        stage['argv'] = [a.replace('{work_dir}', f"{{root}}/{stage['name']}") for a in stage['argv']]
        stage['creates'] = f"{{root}}/{stage['name']}/{BENCHMARK_RECORD}"
    out += benches
    prepared = [dict(name=prepare_name(p['creates']), kind='command', argv=list(p['argv']), creates=p['creates'])
                for p in table.prepare]
    for stage, _ in out:  # every training reads what the table prepares
        if stage.get('kind', 'train') == 'train':
            stage['depends_on'] = [*(s['name'] for s in prepared), *stage.get('depends_on', [])]
    out = [(s, []) for s in prepared] + out
    board = dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s, _ in out])
    if benches:
        board['benchmarks'] = [s['creates'] for s, _ in benches]
    out.append((board, []))
    return out


BENCHMARK_RECORD = 'benchmark.json'


def prepare_name(creates: str) -> str:
    """The stage name of a table's ``prepare`` command: ``prepare_`` and the stem of the file it makes."""
    return 'prepare_' + re.sub(r'\W', '_', osp.splitext(osp.basename(creates))[0])


def benchmark_argv(table: MapTable, spec: dict, models: List[str]) -> List[str]:
    """``tools/benchmark.py MODE --OPTION value ... --json {work_dir}/benchmark.json`` of a row's ``benchmark``
    spec (a list value is written comma-separated); the ``paper`` suite measures the table's own rows
    (``--paper-table DOC:NUMBER --paper-rows`` the rows that name this spec) unless the spec says otherwise."""
    spec = dict(spec)
    mode = spec.pop('mode')
    if mode == 'paper':
        spec.setdefault('paper-table', table.key)
        spec.setdefault('paper-rows', list(dict.fromkeys(models)))
    argv = ['tools/benchmark.py', mode]
    for key, value in spec.items():
        argv += [f'--{key}', ','.join(map(str, value)) if isinstance(value, list) else str(value)]
    return argv + ['--json', f'{{work_dir}}/{BENCHMARK_RECORD}']


def benchmark_stages(table: MapTable) -> List[Tuple[dict, List[str]]]:
    """One ``command`` stage per distinct ``benchmark`` spec of the table's rows (:func:`~vitbench.results.
    paper_map.row_benchmark`) and of the table itself (its training rows' speed, ``paper`` suite: the rows whose
    notes state one, :func:`vitbench.results.paper_speed.paper_speeds`), with the models of the rows it measures;
    its record is ``benchmark.json`` in its work dir, which the leaderboard stage shows (``benchmarks``)."""
    groups: Dict[str, Tuple[dict, List[str]]] = {}
    for row in table.rows:
        spec = row_benchmark(row)
        if spec:
            groups.setdefault(json.dumps(spec, sort_keys=True), (spec, []))[1].append(row['model'])
    if table.benchmark:  # the table's rows that train state their speed too (thesis 6.7): all measured at once
        from vitbench.results.paper_speed import speeds_of_rows
        models = [s.model for s in speeds_of_rows(table.key, table.rows)]
        spec = dict(table.benchmark)
        if spec['mode'] == 'paper':
            spec.setdefault('paper-table', table.key)
        groups.setdefault(json.dumps(spec, sort_keys=True), (spec, []))[1].extend(models)
    out = []
    for spec, models in groups.values():
        name = f"benchmark_{spec['mode']}"
        out.append((dict(name=name, kind='command', argv=benchmark_argv(table, spec, models)), models))
    return out


def _merge_same_runs(stages: Dict[tuple, dict], models: Dict[tuple, List[str]],
                     needs: Dict[tuple, Tuple[str, dict]]) -> None:
    """One stage for two configs that are the same run: with the same options, backbone and ``--checkpoint``, two
    config files that differ only in the weights they would start from (MAE-lite Table 5's
    ``maskrcnn_vit_tiny12h_dmae.py`` is ``maskrcnn_vit_tiny12h_mae.py`` with the distilled model's path, which the
    row's ``needs`` replaces). The first stays; the rows of the other are listed with it."""
    groups: Dict[tuple, List[tuple]] = {}
    for key in stages:
        if needs[key][0]:  # only a run given its weights by --checkpoint can be the same run as another config's
            groups.setdefault(key[1:], []).append(key)
    for keys in groups.values():
        kept: List[tuple] = []
        for key in keys:
            same = next((k for k in kept if _same_run(k[0], key[0])), None)
            if same is None:
                kept.append(key)
                continue
            models[same].extend(m for m in models.pop(key) if m not in models[same])
            del stages[key]


def _same_run(config_a: str, config_b: str) -> bool:
    """Two configs that resolve to the same settings but for the path of the backbone weights they start from."""
    from mmengine.config import Config

    from vitbench.console import config_path

    def settings(config: str) -> dict:
        cfg = Config.fromfile(config_path(config), import_custom_modules=False).to_dict()
        cfg.pop('checkpoint', None)  # the configs' variable of the weights' path
        init_cfg = ((cfg.get('model') or {}).get('backbone') or {}).get('init_cfg')
        if isinstance(init_cfg, dict):
            init_cfg.pop('checkpoint', None)
        return cfg
    return config_a == config_b or settings(config_a) == settings(config_b)


def table_config(table: MapTable, work_dir: Optional[str] = None) -> dict:
    """The pipeline config of a table's rows: what a file under configs/pipelines/ would hold."""
    slug = re.sub(r'\W+', '', table.number.lower().replace('.', '_').replace(' ', ''))
    return dict(work_dir=work_dir or osp.join(WORK_DIRS, f'{table.document}_{slug}'), launcher=list(LAUNCHER),
                stages=[s for s, _ in table_stages(table)])


def load_table(table_id: str, work_dir: Optional[str] = None, launcher: Optional[List[str]] = None,
               seeds: Optional[List[int]] = None, baseline: Optional[str] = None, executor: Optional[str] = None,
               slurm: Optional[dict] = None, imports: Optional[List[str]] = None) -> Pipeline:
    """The checked pipeline of a table's rows (the keywords as :func:`~harness.pipeline.spec.load_pipeline`'s)."""
    return table_pipeline(find_table(table_id), work_dir, launcher, seeds, baseline, executor, slurm, imports)


def table_pipeline(table: MapTable, work_dir: Optional[str] = None, launcher: Optional[List[str]] = None,
                   seeds: Optional[List[int]] = None, baseline: Optional[str] = None, executor: Optional[str] = None,
                   slurm: Optional[dict] = None, imports: Optional[List[str]] = None) -> Pipeline:
    """:func:`load_table` of a map entry."""
    cfg = table_config(table)
    swapped = [s['args'][s['args'].index('--backbone') + 1] for s in cfg['stages'] if '--backbone' in s.get('args', [])]
    path = f'--table {shlex.quote(table.key)}'  # names the pipeline in its messages and the commands it prints
    if swapped:
        check_backbones(path, swapped)
    return pipeline_from(cfg, path, None, launcher, work_dir, seeds, baseline, executor, slurm, imports)


def describe(table_id: str) -> List[str]:
    """What ``--table`` runs, for the reader: the table, each stage's rows, and where the paper's numbers show."""
    table = find_table(table_id)
    stages = table_stages(table)
    runnable = sum(row_runnable(r) for r in table.rows)
    lines = [f'table {table.key}: {table.title}; {runnable} of its {max(table.n_rows, len(table.rows))} rows run'
             + (f' (the rest: {table.why})' if table.why else '')]
    prepared = {prepare_name(p['creates']) for p in table.prepare}
    for stage, models in stages[:-1]:
        if stage['name'] in prepared:
            lines.append(f"  {stage['name']}: {' '.join(stage['argv'])} (writes {stage['creates']}, which the "
                         'trainings read; done when it exists)')
            continue
        users = [s['name'] for s, _ in stages if stage['name'] in s.get('depends_on', [])
                 and s.get('kind') != 'leaderboard']
        what = ', '.join(dict.fromkeys(models)) or 'pre-training'
        taught = [s['name'] for s, _ in stages if f"{{{stage['name']}}}/backbone.pth" in s.get('args', [])]
        tested = [s['name'] for s, _ in stages if s.get('weights') == f"{{{stage['name']}.last_checkpoint}}"]
        users = [u for u in users if u not in taught and u not in tested]
        if stage.get('kind') == 'test':
            what += f" (tests the model {stage['depends_on'][0]} trained)"
        what += f" (measured: {' '.join(stage['argv'])})" if stage.get('kind') == 'command' else ''
        what += f" (its backbone.pth: where {', '.join(users)} start{'s' if len(users) == 1 else ''})" if users else ''
        what += f" (its backbone.pth: the distillation teacher of {', '.join(taught)})" if taught else ''
        if tested:
            what += f" (its last checkpoint: what {', '.join(tested)} test{'s' if len(tested) == 1 else ''})"
        lines.append(f"  {stage['name']}: {what}")
    measured = [s for s, _ in stages if s.get('kind') == 'command' and s['name'] not in prepared]
    if measured:
        lines.append(f"  leaderboard: {', '.join(s['name'] for s in measured)}'s measured ratios beside the paper's "
                     '(absolute images/s depend on the hardware)')
    if table.id and table.id in _board_ids():
        lines.append(f"  leaderboard: the measured rows beside the paper's, table '{table.id}'")
    elif table.id:
        lines.append(f"  leaderboard: the measured rows beside the paper's, table '{table.id}' (shown where a "
                     'measured cell links to one of its rows)')
    elif len(measured) + len(prepared) < len(stages) - 1:
        lines.append(f"  leaderboard: the measured rows; the paper's numbers of this table are not on the board "
                     f'(no row of it can link: docs/coverage.md says why): vitbench/results/papers/'
                     f'{table.document}.yaml')
    return lines
