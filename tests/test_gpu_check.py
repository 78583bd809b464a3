"""tools/gpu_check.py: the one GPU check runs its steps as the suite's own commands, reports each (status, time,
log) in JSON and Markdown after every step, skips what would start past its time budget and says so, and a check
run in parts reports every part. Its GPU numbers: docs/benchmarks.md ("On GPUs"); here, on CPU, its bookkeeping."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def check(out, *args):
    return subprocess.run([sys.executable, 'tools/gpu_check.py', '--out', str(out), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)


def test_the_gpu_check_reports_each_step_and_what_its_budget_left_out(tmp_path):
    first = check(tmp_path, '--steps', 'env,bench_dense,demo', '--budget', '0')  # env starts, the rest is over
    assert first.returncode == 1, first.stdout + first.stderr
    report = json.loads((tmp_path / 'gpu_check.json').read_text())
    (env,) = report['steps']
    assert env['name'] == 'env' and env['status'] == 'ok', (tmp_path / 'env.log').read_text()
    assert 'tools/env_check.py' in env['command'] and 'torch' in (tmp_path / 'env.log').read_text()
    assert report['skipped'] == ['bench_dense', 'demo'] and report['machine']['cpu_count'] >= 1
    markdown = (tmp_path / 'gpu_check.md').read_text()
    assert '| env | ok |' in markdown and '| demo | skipped: over the budget | - |' in markdown

    broken = check(tmp_path, '--steps', 'nonsense')  # a mistyped step: one line naming the steps there are
    assert broken.returncode == 2 and 'unknown nonsense; the steps are env, bench_backbones' in broken.stderr
    second = check(tmp_path, '--steps', 'env')  # a check run in parts keeps the earlier parts' steps
    assert second.returncode == 0, second.stdout
    assert [s['name'] for s in json.loads((tmp_path / 'gpu_check.json').read_text())['steps']] == ['env']


def test_the_report_shows_each_profiled_step_by_kind():
    """With the pretrain steps' ``--profile``, the Markdown report has one line per profiled step, its kinds in
    the order of their time (the JSON rows as the benchmark writes them)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('gpu_check', REPO / 'tools' / 'gpu_check.py')
    gpu_check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_check)
    row = dict(model='deit_base_patch16_224', impl='mae_b', mode='train step', dtype='bf16', batch=256,
               ms_per_iter=58.6, profile=dict(ms_per_step={'matmul': 22.8, 'fused': 11.0}, total_ms=33.8, top=[]))
    lines = gpu_check.markdown(dict(machine=dict(cpu_count=16, python='3.12'), steps=[], skipped=[], ratios={},
                                    rows={'bench_pretrain_compiled': [row]}, demo={}))
    assert '- bench_pretrain_compiled, mae_b (58.6 ms): matmul 22.8 ms (67 %), fused 11.0 ms (33 %)' in lines
