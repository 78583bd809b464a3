"""vitbench/compat/: the one home of every reach into an upstream package's private internals.

* The installed upstream versions are the ones the compat modules were written for (``WRITTEN_FOR``): an upgrade
  fails here, naming the module to re-check.
* No source file outside vitbench/compat/ reaches into upstream privates: an attribute ``obj._name`` (also through
  ``getattr`` / ``hasattr`` / ``setattr`` / ``delattr`` with a literal name) that the suite's own code never
  defines, a ``from upstream import _name``, or an import of an upstream ``_private`` module.
* What each compat function does, where that is cheap to check and no other test checks it already (the resume
  reaches: tests/test_faults_resume.py; the forkserver: tests/test_pipeline_preload.py; the extra sets' validation
  loop: tests/test_pretrain_imagenet_variants.py; the COCO annotations: tests/test_det_datasets.py).
"""
import ast
import importlib
import io
import pickle
import sys
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pytest
import torch

from vitbench.compat import WRITTEN_FOR

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ('backbones', 'pretrain', 'downstream', 'vitbench', 'tools')
COMPAT = Path('vitbench', 'compat')
# namedtuple's public methods, underscored so as not to clash with field names (Python's documentation says so)
PUBLIC_UNDERSCORED = {'_replace', '_asdict', '_make', '_fields', '_field_defaults'}
ATTRIBUTE_FUNCTIONS = ('getattr', 'hasattr', 'setattr', 'delattr')


def installed(package: str) -> str:
    return '.'.join(map(str, sys.version_info[:3])) if package == 'python' else version(package)


@pytest.mark.parametrize('package', sorted(WRITTEN_FOR))
def test_upstream_versions_are_those_the_compat_modules_were_written_for(package):
    written_for, module = WRITTEN_FOR[package]
    now = installed(package)
    assert now == written_for or now.startswith(written_for + '.') or now.startswith(written_for + '+'), (
        f'{package} {now} is installed, but {module} was written for {package} {written_for}: re-check every '
        f'function there against {package} {now} (each docstring names the private thing it touches), then set '
        f"WRITTEN_FOR['{package}'] in vitbench/compat/__init__.py to '{now}'")


def _private(name: str) -> bool:
    return name.startswith('_') and not (name.startswith('__') and name.endswith('__'))


def _trees(root: Path):
    files = sorted(p for pkg in PACKAGES if (root / pkg).is_dir() for p in (root / pkg).rglob('*.py'))
    return {p.relative_to(root): ast.parse(p.read_text(), str(p)) for p in files}


def _defined_names(trees) -> set:
    """Every name the suite defines: functions, classes, methods, variables (module globals and class attributes
    included), ``self._x`` / ``cls._x`` attributes, import aliases."""
    names = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                  and isinstance(node.value, ast.Name) and node.value.id in ('self', 'cls')):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.add(node.asname or node.name.split('.')[0])
    return names


def _upstream(module: str) -> bool:
    return module.split('.')[0] not in PACKAGES


def private_reaches(root: Path = ROOT) -> list:
    trees = _trees(root)
    ours = _defined_names(trees) | PUBLIC_UNDERSCORED
    reaches = []
    for path, tree in trees.items():
        if COMPAT in path.parents:
            continue
        for node in ast.walk(tree):
            found = None
            if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in ours:
                found = f'.{node.attr}'
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ATTRIBUTE_FUNCTIONS and len(node.args) >= 2
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                  and _private(node.args[1].value) and node.args[1].value not in ours):
                found = f"{node.func.id}(..., '{node.args[1].value}')"
            elif isinstance(node, ast.ImportFrom) and not node.level and _upstream(node.module):
                names = [a.name for a in node.names if _private(a.name)]
                if names or any(map(_private, node.module.split('.'))):
                    found = f"from {node.module} import {', '.join(names or [a.name for a in node.names])}"
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names if _upstream(a.name) and any(map(_private, a.name.split('.')))]
                found = f"import {', '.join(names)}" if names else None
            if found:
                reaches.append(f'{path}:{node.lineno}: {found}')
    return sorted(reaches)


def test_no_private_upstream_reach_outside_compat():
    reaches = private_reaches()
    assert not reaches, ('private upstream internals reached outside vitbench/compat/ (move each into a function '
                         'there, with the version and the reason, or use a public API):\n' + '\n'.join(reaches))


def private_overrides(packages=('backbones', 'pretrain', 'downstream', 'vitbench')) -> list:
    """Private upstream methods the suite's classes override (``def _apply`` over ``nn.Module._apply``): read from
    the imported classes, where the grep above sees only a definition of the suite's own. A mixin counts in the class
    that mixes it with an upstream base."""
    def in_suite(module: str) -> bool:
        return module.split('.')[0] in packages

    found = set()
    for path in sorted(p for pkg in packages for p in (ROOT / pkg).rglob('*.py')):
        module = '.'.join(path.relative_to(ROOT).with_suffix('').parts).removesuffix('.__init__')
        if module.startswith('vitbench.compat'):
            continue
        for cls in vars(importlib.import_module(module)).values():
            if not isinstance(cls, type) or cls.__module__ != module:
                continue
            upstream = [base for base in cls.__mro__ if not in_suite(base.__module__)]
            for ours in (base for base in cls.__mro__ if in_suite(base.__module__)):
                for name in vars(ours):
                    if _private(name) and name != '_abc_impl':  # _abc_impl: every ABC subclass has its own
                        overridden = next((b for b in upstream if name in vars(b)), None)
                        if overridden is not None and not ours.__module__.startswith('vitbench.compat'):
                            found.add(f'{ours.__module__}.{ours.__qualname__}.{name} overrides '
                                      f'{overridden.__module__}.{overridden.__qualname__}.{name}')
    return sorted(found)


def test_no_private_upstream_method_overridden_outside_compat():
    overrides = private_overrides()
    assert not overrides, ('private upstream methods overridden outside vitbench/compat/ (move the override into a '
                           'mixin there, with the version and the reason):\n' + '\n'.join(overrides))


def test_the_override_check_sees_a_mixin_over_a_private_method(monkeypatch):
    import pretrain.teacher
    from vitbench.compat.torch import AppliesToDetached
    # the teacher's mixin as it was before it moved into compat: a suite class defining _apply
    monkeypatch.setattr(pretrain.teacher.TeacherMixin, '_apply', AppliesToDetached._apply, raising=False)
    found = private_overrides(('pretrain',))  # the pretrain package alone: compat's mixin counts as upstream here
    assert [f for f in found if f.startswith('pretrain.teacher.TeacherMixin._apply overrides ')], found


def test_the_grep_sees_each_kind_of_reach(tmp_path):
    """The check fails on what it guards against, and not on the suite's own underscored names nor in compat."""
    (tmp_path / 'pretrain').mkdir()
    (tmp_path / 'pretrain' / 'probe.py').write_text(
        'import numpy._core\n'
        'from mmengine.runner.loops import _parse_losses\n'
        'from numpy._core import multiarray\n'
        'class Hook:\n'
        '    def __init__(self, runner):\n'
        '        self._mine = runner._train_loop\n'
        '        self._mine._helper()\n'
        '        getattr(runner, "_resume", None)\n'
        '        hasattr(runner, "_mine")\n'
        '    def _helper(self):\n'
        '        return self.__class__, (1, 2)._replace\n')
    (tmp_path / 'vitbench' / 'compat').mkdir(parents=True)
    (tmp_path / 'vitbench' / 'compat' / 'mmengine.py').write_text('def f(runner):\n    return runner._resume\n')
    assert private_reaches(tmp_path) == [
        'pretrain/probe.py:1: import numpy._core',
        'pretrain/probe.py:2: from mmengine.runner.loops import _parse_losses',
        'pretrain/probe.py:3: from numpy._core import multiarray',
        'pretrain/probe.py:6: ._train_loop',
        "pretrain/probe.py:8: getattr(..., '_resume')"]


# ------------------------------------------------------------------------------------- what the reaches do


def test_batch_norm_is_any_batch_norm_and_nothing_else():
    from mmengine.model.utils import _BatchNormXd  # mmengine's own subclass, as revert_sync_batchnorm makes it

    from vitbench.compat.torch import is_batch_norm
    norms = [torch.nn.BatchNorm1d(2), torch.nn.BatchNorm2d(2), torch.nn.BatchNorm3d(2), torch.nn.SyncBatchNorm(2),
             torch.nn.LazyBatchNorm2d(), _BatchNormXd(2)]
    assert all(map(is_batch_norm, norms))
    assert not any(map(is_batch_norm, [torch.nn.LayerNorm(2), torch.nn.InstanceNorm2d(2), torch.nn.GroupNorm(1, 2)]))


def test_history_buffer_pickles_through_its_constructor_and_loads_safely(tmp_path):
    from mmengine.logging import HistoryBuffer

    from vitbench.compat.mmengine import pickle_history_buffers_by_constructor
    from vitbench.engine.checkpoint_policy import install_checkpoint_policy
    install_checkpoint_policy()  # what an entry point does (the allow-list of safe globals, among others)
    pickle_history_buffers_by_constructor()
    buffer = HistoryBuffer([1.0, 2.0, 3.0], [1, 1, 2], max_length=5)
    assert b'getattr' not in pickle.dumps(buffer)
    torch.save({'buffer': buffer}, tmp_path / 'x.pth')
    loaded = torch.load(tmp_path / 'x.pth', weights_only=True)['buffer']
    assert [h.tolist() for h in loaded.data] == [[1.0, 2.0, 3.0], [1, 1, 2]] and loaded.max_length == 5


def test_dataset_classes_are_set_where_metainfo_reads_them():
    from mmengine.dataset import BaseDataset

    from vitbench.compat.mmengine import set_dataset_classes

    class Toy(BaseDataset):
        def load_data_list(self):
            set_dataset_classes(self, ('cat', 'dog'))
            return [dict(x=0)]
    assert Toy(serialize_data=False).metainfo['classes'] == ('cat', 'dog')


def test_iou_results_keep_their_names_and_mmseg_layout():
    from mmseg.evaluation import IoUMetric

    from vitbench.compat.mmseg import iou_areas, name_iou_results, unname_iou_results
    metric = IoUMetric()
    metric.dataset_meta = dict(classes=('a', 'b'))
    pred = torch.tensor([[0, 1], [1, 1]])
    sample = dict(pred_sem_seg=dict(data=pred[None]), gt_sem_seg=dict(data=torch.tensor([[0, 1], [0, 1]])[None]))
    metric.process({}, [sample, sample])
    name_iou_results(metric.results, 0, ['x', 'y'])
    names, results = unname_iou_results(metric.results)
    assert names == ['x', 'y']
    intersect, union = iou_areas(results)
    # class a: predicted at (0,0), true at (0,0) and (1,0); class b: predicted at 3 pixels, true at 2
    assert [t.tolist() for t in intersect] == [[1, 2]] * 2 and [t.tolist() for t in union] == [[2, 3]] * 2
    assert metric.compute_metrics(results)['mIoU'] == pytest.approx(100 * (1 / 2 + 2 / 3) / 2, abs=0.01)


def test_pure_python_pickler_has_a_dispatch_table_to_change():
    from vitbench.compat.python import PurePythonPickler
    assert bytes in PurePythonPickler.dispatch
    buffer = io.BytesIO()
    PurePythonPickler(buffer, protocol=2).dump({'a': np.arange(3).tolist()})
    assert pickle.loads(buffer.getvalue()) == {'a': [0, 1, 2]}
