"""vitbench installs as a package (issue 33): a non-editable wheel carries the data files the code reads at run time
(the leaderboard's paper rows, the ImageNet subset lists), the license pyproject.toml declares, the configs, tools and
lock file (vitbench/.mim/, setup.py) and the console scripts; installed into a scratch environment, its commands run
from another folder with a shipped config. pyproject.toml declares ranges, requirements.lock the tested versions."""
import ast
import configparser
import importlib.metadata
import os
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from harness import demo_data
import vitbench.console

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp('wheel')
    result = subprocess.run([sys.executable, '-m', 'pip', 'wheel', str(REPO), '--no-deps', '--no-build-isolation',
                             '-w', str(out), '-q'], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    (path,) = out.glob('vitbench-*.whl')
    return path


def test_the_wheel_carries_the_data_the_code_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    from pretrain.imagenet_subsets import SHIPPED
    from vitbench.results.paper import PAPER_RESULTS
    from vitbench.results.paper_map import DOCUMENTS, PAPERS
    documents = [f'{PAPERS}/{d}.yaml' for d in DOCUMENTS]  # the map of the papers, which the board's tables live in
    for path in [PAPER_RESULTS, *documents, *SHIPPED.values()]:  # where the code looks for them, as the wheel must hold them
        assert str(Path(path).relative_to(REPO)) in names, path
    assert any(n.endswith('.dist-info/licenses/LICENSE') for n in names)


def test_the_wheel_ships_configs_tools_the_lock_and_commands(wheel):
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    shipped = {n[len('vitbench/.mim/'):] for n in names if n.startswith('vitbench/.mim/')}
    in_repo = {str(p.relative_to(REPO)) for folder in ('configs', 'tools') for p in (REPO / folder).rglob('*.py')
               if '__pycache__' not in p.parts}
    assert in_repo <= shipped and 'requirements.lock' in shipped
    (entry_points,) = [n for n in names if n.endswith('.dist-info/entry_points.txt')]
    scripts = configparser.ConfigParser()
    scripts.read_string(archive.read(entry_points).decode())
    for command, target in scripts['console_scripts'].items():  # every command runs a tool the wheel ships
        function = getattr(vitbench.console, target.split(':')[1])
        assert f'tools/{function.__name__}.py' in shipped, command
    assert {'vitbench-train', 'vitbench-test', 'vitbench-pipeline', 'vitbench-leaderboard', 'vitbench-benchmark',
            'vitbench-list-backbones'} <= set(scripts['console_scripts'])
    # issue 47: how to cite the suite travels with it, as the file of the checkout
    assert archive.read('vitbench/.mim/CITATION.cff') == (REPO / 'CITATION.cff').read_bytes()
    (metadata,) = [n for n in names if n.endswith('.dist-info/METADATA')]
    assert f'Version: {_declared_version()}\n' in archive.read(metadata).decode()


def _declared_version() -> str:
    return tomllib.loads((REPO / 'pyproject.toml').read_text())['project']['version']


def test_the_sdist_carries_what_the_wheel_copies():
    """setup.py copies SHIPPED into the wheel from the source tree; an sdist has only what MANIFEST.in includes
    (besides the packages), so every SHIPPED path must be included there, or a wheel built from the sdist fails."""
    tree = ast.parse((REPO / 'setup.py').read_text())
    (shipped,) = [ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and any(getattr(target, 'id', None) == 'SHIPPED' for target in node.targets)]
    assert 'CITATION.cff' in shipped
    manifest = [line.split() for line in (REPO / 'MANIFEST.in').read_text().splitlines()
                if line.strip() and not line.startswith('#')]
    included = {words[1] for words in manifest if words[0] in ('include', 'recursive-include', 'graft')}
    assert set(shipped) <= included, set(shipped) - included


def test_vitbench_has_the_version_of_its_metadata_else_of_the_checkout(monkeypatch):
    import vitbench
    assert vitbench.__version__ == importlib.metadata.version('vitbench') == _declared_version()

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(importlib.metadata, 'version', not_installed)
    assert vitbench._version() == _declared_version()  # a checkout on PYTHONPATH reads its pyproject.toml


def test_the_lock_pins_a_version_inside_every_declared_range():
    """pyproject.toml's ranges (dependencies and the test / tracker extras) and requirements.lock, which `make
    install` installs, agree: every declared package is locked, at a version its range allows, and nothing is
    pinned exactly in pyproject.toml any more."""
    project = tomllib.loads((REPO / 'pyproject.toml').read_text())['project']
    declared = [Requirement(r) for r in project['dependencies']]
    declared += [Requirement(r) for extra in ('test', 'tensorboard', 'wandb', 'mlflow')
                 for r in project['optional-dependencies'][extra]]
    locked = {}
    for line in (REPO / 'requirements.lock').read_text().splitlines():
        if line.strip() and not line.startswith('#'):
            name, _, version = line.partition('==')
            locked[name.strip().lower().replace('_', '-')] = version.strip()
    for requirement in declared:
        name = requirement.name.lower().replace('_', '-')
        assert name in locked, f'{requirement.name} is not in requirements.lock'
        assert requirement.specifier.contains(locked[name], prereleases=True), (requirement, locked[name])
        assert not any(s.operator == '==' for s in requirement.specifier), f'{requirement}: a range, not a pin'


def test_every_dependency_stops_below_the_release_series_after_the_locked_one():
    """Issue 47: the ranges admit what was tested and no more. Each dependency has an upper bound; those of the
    packages that change behaviour between minor releases stop below the next minor release of the locked version
    (regex, calendar-versioned: the next year), and every lower bound admits the lowest measured version."""
    project = tomllib.loads((REPO / 'pyproject.toml').read_text())['project']
    declared = {Requirement(r).name: Requirement(r).specifier for r in project['dependencies']}
    locked = dict(line.split('==') for line in (REPO / 'requirements.lock').read_text().splitlines()
                  if '==' in line and not line.startswith('#'))
    unbounded = [name for name, spec in declared.items() if not any(s.operator in ('<', '<=', '~=') for s in spec)]
    assert unbounded == ['safetensors', 'pycocotools', 'ftfy']  # file formats and a text fixer, stable APIs
    for name in ('torch', 'torchvision', 'timm', 'scipy', 'matplotlib', 'opencv-python-headless'):
        major, minor = Version(locked[name]).release[:2]
        assert declared[name].contains(locked[name]), name
        assert not declared[name].contains(f'{major}.{minor + 1}.0'), f'{name} admits {major}.{minor + 1}, untested'
    assert not declared['regex'].contains(f'{Version(locked["regex"]).major + 1}.1.1')
    # the lowest measured: torch 2.11.0 (+cu130) and its torchvision 0.26 on the H200 of docs/benchmarks.md
    assert declared['torch'].contains('2.11.0') and declared['torchvision'].contains('0.26.0')
    assert not declared['torch'].contains('2.10.0')


def _run(argv, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k not in ('PYTHONPATH', 'VIRTUAL_ENV')}
    result = subprocess.run(argv, cwd=cwd, env=dict(env, OMP_NUM_THREADS='1'), capture_output=True, text=True,
                            timeout=timeout)
    assert result.returncode == 0, f'{argv}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}'
    return result.stdout


def test_the_installed_wheel_runs_from_another_folder(wheel, tmp_path):
    """A scratch virtualenv gets the wheel alone (pip --no-deps); its dependencies resolve from this environment's
    site-packages through a .pth (nothing downloaded). From a folder without the checkout, the commands find the
    shipped configs and tools: a short training of a shipped config (on tiny demo data there), a pipeline's stage
    commands, and the environment check against the shipped lock file."""
    scratch = tmp_path / 'scratch'
    subprocess.run([sys.executable, '-m', 'venv', '--without-pip', str(scratch)], check=True, timeout=120)
    python, bin_dir = scratch / 'bin' / 'python', scratch / 'bin'
    _run([sys.executable, '-m', 'pip', '--python', str(python), 'install', '-q', '--no-deps', '--no-index',
          str(wheel)], cwd=tmp_path)
    site = Path(_run([str(python), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                     cwd=tmp_path).strip())
    # after the install: pip would otherwise find vitbench (editable) already there and install nothing
    (site / 'zz_stack.pth').write_text(sysconfig.get_paths()['purelib'] + '\n')
    work = tmp_path / 'elsewhere'
    work.mkdir()

    found = _run([str(python), '-c', 'from importlib.util import find_spec; '
                  'print(*(find_spec(m).origin for m in ("vitbench", "backbones", "pretrain", "downstream")))'],
                 cwd=work).split()
    assert all(path.startswith(str(site)) for path in found), found  # the wheel's packages, not the checkout's

    datasets = demo_data.select(['imagenet', 'imagenet_v2', 'imagenet_real'])  # where sup_demo.py reads them
    assert demo_data.generate(datasets, str(work / 'data' / 'demo'), scale='tiny', log=lambda m: None) == []
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader')
               for key in ('num_workers=0', 'persistent_workers=False', 'batch_size=4', 'dataset.indices=8')]  # 2 iterations
    _run([str(bin_dir / 'vitbench-train'), 'demo/sup_demo.py', '--work-dir', 'run', '--cfg-options', *options,
          'train_cfg.max_epochs=1', 'train_cfg.val_interval=1', 'default_hooks.checkpoint.interval=1'], cwd=work)
    record = (work / 'run' / 'result.json').read_text()
    assert '"top1"' in record and str(site / 'vitbench' / '.mim' / 'configs' / 'demo' / 'sup_demo.py') in record

    # the board reads the paper rows from the wheel's own data file (issue 32: a non-editable install once shipped
    # without it), beside the measured row of the run above
    board = _run([str(bin_dir / 'vitbench-leaderboard'), 'run'], cwd=work)
    measured, _, papers = board.partition('## Paper reference results')
    assert 'vit_demo_patch8_64' in measured and 'Table 6.12: DeiT III semantic segmentation' in papers
    assert f'{site}/vitbench/results/papers/board.yaml' in _run(
        [str(python), '-c', 'from vitbench.results.paper import PAPER_RESULTS; print(PAPER_RESULTS)'], cwd=work)

    plan = _run([str(bin_dir / 'vitbench-pipeline'), 'pipelines/demo.py', '--dry-run', '--work-dir', 'p'], cwd=work)
    shipped = site / 'vitbench' / '.mim'
    assert f'{shipped}/tools/train.py {shipped}/configs/demo/sup_demo.py' in plan
    assert f'{shipped}/tools/make_demo_data.py' in plan

    check = _run([str(bin_dir / 'vitbench-env-check')], cwd=work)
    assert 'mmcv.ops     nms and RoIAlign run' in check and 'from the checkout' not in check
