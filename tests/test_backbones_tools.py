"""tools/list_backbones.py (tools/benchmark.py's JSON-contract test lands with the benchmark)."""
import importlib.util
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / 'tools'


def _tool(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_list_backbones(capsys):
    rows = _tool('list_backbones').main(['deit3_*', '--no-flops'])
    out = capsys.readouterr().out
    assert [r['name'] for r in rows] == sorted(r['name'] for r in rows) and len(rows) == 9
    assert 'deit3_base_patch16_18x2' in out and '18x2' in out and '256.73' in out
    (demo,) = _tool('list_backbones').main(['vit_demo*'])
    assert demo['gflops'] > 0 and demo['resolution'] == 64
    with pytest.raises(SystemExit, match='no variant matches'):
        _tool('list_backbones').main(['resnet*'])
