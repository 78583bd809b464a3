"""The checks of a pipeline config's stages, before anything runs: each stage's keys for its kind, the graph of
their ``depends_on`` and ``{STAGE}`` references (no unknown stage, no cycle), seeds, backbones and the work dir.
Each bad value is one :class:`~harness.pipeline.dag.PipelineError` naming the file, the stage and the key."""
import os
import os.path as osp
import re
import string
from typing import Dict, List, Optional

from vitbench.results.expectations import expectations_from

from .dag import PipelineError
from .resources import ResourceError, check_resources

STAGE_KINDS = ('train', 'test', 'command', 'leaderboard')
_COMMON_KEYS = ('name', 'kind', 'depends_on', 'per_backbone', 'metric', 'outputs', 'resources')
_KIND_KEYS = {
    'train': ('config', 'checkpoint', 'cfg_options', 'args', 'seeds', 'families'),
    'test': ('config', 'weights', 'tta', 'checkpoint', 'cfg_options', 'args', 'seeds', 'families'),
    'command': ('argv', 'creates'),
    'leaderboard': ('runs', 'out', 'formats', 'paper', 'baseline', 'expect', 'figures', 'intervals', 'benchmarks'),
}
SEEDED_KINDS = ('train', 'test')
_BUILTIN_FIELDS = ('backbone', 'work_dir', 'root')
_STAGE_ATTRS = ('', '.last_checkpoint')
_NAME = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')


def why_unwritable(folder: str) -> Optional[str]:
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


def check_stage(path: str, index: int, spec) -> dict:
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
    if kind in SEEDED_KINDS and spec.get('seeds', 'shared') != 'shared':
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
        _expect_list(where, spec, 'benchmarks')
        if spec.get('intervals') not in (None, 'line', 'tooltip'):  # the HTML's (tools/leaderboard.py --intervals)
            raise PipelineError(f"{where}: key 'intervals' is {spec['intervals']!r}, expected 'line' (a number's "
                                "interval on a second line) or 'tooltip'")
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


def references(spec: dict, where: str) -> List[str]:
    names = []
    for key in ('checkpoint', 'weights', 'cfg_options', 'args', 'argv', 'creates', 'runs', 'out'):
        for text in _strings(spec.get(key)):
            names += [n for n in _template_fields(text, f'{where} key {key!r}') if n not in names]
    return names


def check_graph(path: str, specs: List[dict], by_name: Dict[str, dict]) -> None:
    for spec in specs:
        where = f"{path}: stage '{spec['name']}'"
        for dep in spec['depends_on']:
            if dep not in by_name:
                raise PipelineError(f"{where}: depends_on names '{dep}', which is no stage of this pipeline "
                                    f'(stages: {", ".join(by_name)})')
            if dep == spec['name']:
                raise PipelineError(f'{where}: depends on itself')
        for name in references(spec, where):
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


def check_seeds(where: str, seeds) -> List[int]:
    # numpy's and torch's generators take 0 <= seed < 2**32; a seed given twice would be one run done twice
    if not (isinstance(seeds, list) and seeds and all(isinstance(s, int) and not isinstance(s, bool)
                                                      and 0 <= s < 2 ** 32 for s in seeds)):
        raise PipelineError(f'{where} is {seeds!r}, expected a non-empty list of whole numbers from 0 to 2**32 - 1, '
                            'e.g. [0, 1, 2]')
    twice = [s for i, s in enumerate(seeds) if s in seeds[:i]]
    if twice:
        raise PipelineError(f'{where} is {seeds!r}: seed {twice[0]} is given twice, expected distinct seeds')
    return list(seeds)


def check_backbones(path: str, names: List[str]) -> None:
    from backbones.factory import family_of
    for name in names:
        try:
            family_of(name)  # a named variant, or timm:NAME
        except KeyError as e:
            raise PipelineError(f'{path}: backbones: {e.args[0]}') from e

