"""The import graph follows the layers of docs/architecture.md: every import points down, none sideways
between packages of one layer, so there is no circle; and no docstring cites a file the repository lacks.

Read from the source (ast), function-local imports included: a lazy import is an arrow all the same."""
import ast
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
# Bottom to top. A unit is a top-level package or a vitbench sub-package; it may import only units of lower
# layers (and itself).
LAYERS = [
    ['vitbench.fileio', 'vitbench.sample_error', 'vitbench.refusal', 'vitbench.console', 'vitbench.compat',
     'vitbench.yaml_file'],
    ['vitbench.results'],
    ['vitbench.registry'],
    ['vitbench.engine'],
    ['backbones'],
    ['pretrain'],
    ['downstream'],
    ['harness.tasks'],
    ['harness.experiment', 'harness.demo_data'],
    ['harness.pipeline'],
    ['tools'],
]
LAYER = {unit: i for i, units in enumerate(LAYERS) for unit in units}
PACKAGES = ('backbones', 'pretrain', 'downstream', 'vitbench', 'harness', 'tools')


def unit_of(module: str) -> str:
    parts = module.split('.')
    return '.'.join(parts[:2]) if parts[0] in ('vitbench', 'harness') and len(parts) > 1 else parts[0]


def module_of(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix('').parts)
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def imports_of(path: Path, root: Path = ROOT):
    """(line, imported module) for every import of a suite package in ``path``, relative ones resolved."""
    module = module_of(path, root)
    package = module.split('.') if path.name == '__init__.py' else module.split('.')[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            if node.module:
                names = ['.'.join(base + [node.module])]
            else:
                names = ['.'.join(base + [a.name]) for a in node.names]
        else:
            continue
        for name in names:
            if name.split('.')[0] in PACKAGES and name not in ('vitbench', 'harness'):
                yield node.lineno, name


def source_files(root: Path = ROOT):
    return sorted(p for pkg in PACKAGES for p in (root / pkg).rglob('*.py'))


def upward_imports(root: Path = ROOT):
    wrong = []
    for path in source_files(root):
        here = unit_of(module_of(path, root))
        for line, name in imports_of(path, root):
            there = unit_of(name)
            if there != here and LAYER.get(there, -1) >= LAYER.get(here, -1):
                wrong.append(f'{path.relative_to(root)}:{line}: {here} (layer {LAYER.get(here)}) imports {name} '
                             f'(layer {LAYER.get(there)})')
    return wrong


def test_every_unit_has_a_layer():
    units = {unit_of(module_of(p)) for p in source_files()} - {'vitbench', 'harness'}
    assert units <= LAYER.keys(), f'place these in LAYERS (and docs/architecture.md): {units - LAYER.keys()}'


def test_imports_point_down_only():
    wrong = upward_imports()
    assert not wrong, 'imports that do not point down:\n' + '\n'.join(wrong)


def test_the_check_sees_upward_and_sideways_imports(tmp_path):
    """The rule fails on what it guards against: the core reaching up into a task, a lazy import included, and
    two packages of one layer leaning on each other."""
    probe = tmp_path / 'vitbench' / 'engine' / 'probe.py'
    probe.parent.mkdir(parents=True)
    probe.write_text('def f():\n    from downstream.backbone_swap import swap_backbone\n')
    sideways = tmp_path / 'harness' / 'demo_data' / '__init__.py'
    sideways.parent.mkdir(parents=True)
    sideways.write_text('from ..experiment import cli\n')
    assert upward_imports(tmp_path) == [
        'harness/demo_data/__init__.py:1: harness.demo_data (layer 8) imports harness.experiment (layer 8)',
        'vitbench/engine/probe.py:2: vitbench.engine (layer 3) imports downstream.backbone_swap (layer 6)']


CITED = re.compile(r'\b((?:docs|configs|tools|backbones|pretrain|downstream|vitbench|tests)/[\w./-]+\.(?:py|md|yaml))')


def test_cited_files_exist():
    """The code and its docs cite files of the repository only; nothing cites DESIGN.md or the notes, which are
    not in it (configs and tests are only checked for those: they name missing files on purpose)."""
    documents = [*source_files(), *sorted((ROOT / 'docs').glob('*.md')), ROOT / 'README.md', ROOT / 'Makefile']
    everything = documents + sorted(p for d in ('configs', 'tests') for p in (ROOT / d).rglob('*.py')
                                    if p != Path(__file__).resolve())  # this file names what it looks for
    missing = []
    for path in everything:
        text = path.read_text()
        for cited in sorted(set(CITED.findall(text)) if path in documents else ()):
            if not (ROOT / cited).exists() and '<' not in cited and '*' not in cited:
                missing.append(f'{path.relative_to(ROOT)} cites {cited}')
        for outside in ('DESIGN.md', 'notes/seeds'):
            if outside in text:
                missing.append(f'{path.relative_to(ROOT)} cites {outside}, which is not in the repository')
    assert not missing, '\n'.join(missing)


def test_no_tool_edits_sys_path():
    """The tools import the installed suite (``make install`` installs it editable): a tool that puts the checkout
    on ``sys.path`` would run another tree's code than the one installed, silently."""
    edits = [f'tools/{p.name}:{n}' for p in sorted((ROOT / 'tools').glob('*.py'))
             for n, line in enumerate(p.read_text().splitlines(), 1) if re.search(r'sys\.path\s*(\.|\[|\+?=)', line)]
    assert not edits, 'tools that edit sys.path: ' + ', '.join(edits)
