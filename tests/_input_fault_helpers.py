"""Shared helpers of the input fault-injection tests (test_faults_inputs*.py): the tools called in this process
and the toy config."""
import importlib.util
from pathlib import Path

import pytest

from _tool_helpers import CONFIG, FIXTURES, REPO


def tool(name):
    """tools/<name>.py as a module, to call its main() in this process (no start-up of a new interpreter)."""
    spec = importlib.util.spec_from_file_location(f'vitbench_faults_{name}', REPO / 'tools' / f'{name}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def exit_status(call):
    """The exit status ``call`` ends with (run_main turns a ConfigError into exit 2), 0 if it returns."""
    try:
        call()
    except SystemExit as e:
        return e.code
    return 0


@pytest.fixture
def toy(monkeypatch):
    """tools/train.py on the toy config, in this process: (main, config path)."""
    monkeypatch.syspath_prepend(str(FIXTURES))  # the config's custom_imports
    train = tool('train')
    return lambda *argv: exit_status(lambda: train.run_main(lambda: train.main([str(a) for a in argv])))


def toy_config(tmp_path, text):
    """The toy config plus ``text``."""
    path = tmp_path / 'config.py'
    path.write_text(f'_base_ = [{str(CONFIG)!r}]\n{text}\n')
    return path


def truncate(path: Path, keep=200):
    path.write_bytes(path.read_bytes()[:keep])  # the header survives: PIL opens it, decoding fails
