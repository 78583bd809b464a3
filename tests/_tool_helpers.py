"""Shared helpers of the tests that run the command-line tools on the toy config (toy_fixtures/)."""
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / 'toy_fixtures'
CONFIG = FIXTURES / 'toy_config.py'

# Keys of result.json: pinned here, independently of harness.experiment.result_record, so a change to the schema shows.
RESULT_SCHEMA_KEYS = {'task', 'dataset', 'backbone', 'backbone_overrides', 'pretrain', 'metrics', 'eval', 'protocol', 'img_size',
                      'variant_img_size', 'params_M', 'gflops', 'seed', 'cost', 'config', 'git_commit', 'created', 'per_image',
                      'schedule', 'eval_set', 'options', 'lr', 'run'}


def run_tool(*args, launcher=None, timeout=300):
    """Run a tool from the repository root with the toy fixtures importable; returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    prefix = [sys.executable] if launcher is None else launcher
    return subprocess.run([*prefix, *map(str, args)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=timeout)


def train(work_dir, *extra):
    """tools/train.py on the toy config; fails the test with the tool's stderr if it fails."""
    result = run_tool('tools/train.py', CONFIG, '--work-dir', work_dir, *extra)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def wait_for(condition, timeout=60.0, what='condition'):
    """Polls ``condition`` until it holds; fails the test after ``timeout`` seconds, naming ``what``."""
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f'timed out waiting for {what}'
        time.sleep(0.1)
