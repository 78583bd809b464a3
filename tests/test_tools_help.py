"""Every command line's --help: printed once, readable (no reST double back-quotes from a docstring), and saying
what the tool does where it used to say otherwise."""
import runpy
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / 'tools'
WITH_HELP = ['analyze', 'benchmark', 'convert_checkpoint', 'env_check', 'gpu_check', 'leaderboard', 'list_backbones',
             'make_demo_data', 'pipeline', 'test', 'train']


def help_of(tool: str, monkeypatch, capsys) -> str:
    monkeypatch.setattr(sys, 'argv', [str(TOOLS / f'{tool}.py'), '--help'])
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(TOOLS / f'{tool}.py'), run_name='__main__')
    assert stop.value.code in (0, None)
    return capsys.readouterr().out


@pytest.mark.parametrize('tool', WITH_HELP)
def test_help_is_printed_once_without_rest_quoting(tool, monkeypatch, capsys):
    text = help_of(tool, monkeypatch, capsys)
    assert text.startswith('usage:') and '``' not in text
    lines = [line.strip() for line in text.splitlines() if len(line.strip()) > 40]
    assert not {line for line in lines if lines.count(line) > 1}  # a docstring as description and epilog


@pytest.mark.parametrize('tool, says, not_says', [
    # --jobs runs local stages side by side on any machine, not only on GPUs
    ('pipeline', '--jobs N runs up to N local stages at a time', 'On a machine with GPUs, --jobs N'),
    ('pipeline', 'the stages that depend on it are skipped', 'the stages after it are skipped'),
    # the dense suite builds no compiled model, and takes its precision from --amp's plan, not --dtypes
    ('benchmark', 'dense runs eager', 'with the precision --amp chooses'),
    # without --arch there is no model for these to apply to
    ('convert_checkpoint', 'with --arch: classifier size', None),
    ('test', '--show-dir DIR', None),
    ('leaderboard', 'sort=COLUMN', None),
])
def test_help_says_what_the_tool_does(tool, says, not_says, monkeypatch, capsys):
    text = ' '.join(help_of(tool, monkeypatch, capsys).split())  # argparse re-wraps option help
    assert ' '.join(says.split()) in text
    assert not_says is None or ' '.join(not_says.split()) not in text
