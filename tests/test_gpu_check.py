"""tools/gpu_check.py: the one GPU check runs its steps as the suite's own commands, reports each (status, time,
log) in JSON and Markdown after every step, skips what would start past its time budget and says so, and a check
run in parts reports every part. Its GPU numbers are in the README ("On GPUs"); here, on CPU, its bookkeeping."""
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
