"""tools/list_backbones.py and tools/benchmark.py (the JSON contract of docs/architecture.md)."""
import importlib.util
import json
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
    assert [r['name'] for r in rows] == sorted(r['name'] for r in rows) and len(rows) == 10  # T S M B L H; S and B as 36 blocks and 18x2
    assert 'deit3_base_patch16_18x2' in out and '18x2' in out and '256.73' in out
    (demo,) = _tool('list_backbones').main(['vit_demo*'])
    assert demo['gflops'] > 0 and demo['resolution'] == 64
    with pytest.raises(SystemExit, match='no variant matches'):
        _tool('list_backbones').main(['resnet*'])


def test_benchmark_json_contract(tmp_path):
    path = tmp_path / 'bench.json'
    _tool('benchmark').main(['backbones', '--quick', '--models', 'vit_demo_patch8_64', '--modes', 'fwd',
                             '--json', str(path)])
    result = json.loads(path.read_text())
    assert set(result) == {'machine', 'rows', 'ratios'}
    assert {r['impl'] for r in result['rows']} == {'vitbench', 'timm'}
    assert {(r['impl'], r['dtype']) for r in result['rows']} == {
        (i, d) for i in ('vitbench', 'timm') for d in ('fp32', 'bf16')}
    assert result['ratios']['vit_demo_patch8_64/fwd/fp32/vitbench_vs_timm'] > 0
    assert result['ratios']['vit_demo_patch8_64/fwd/vitbench_bf16_vs_fp32'] > 0
