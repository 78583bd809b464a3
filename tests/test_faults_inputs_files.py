"""Fault injection, input files (issue 19): random or truncated ``.pth`` files, refused pickles given to
``--resume`` / tools/test.py, unwritable outputs: each one line naming the file, without pickle advice where it
would mislead."""
import json

import pytest
import torch

from _input_fault_helpers import exit_status, tool, truncate
from _input_fault_helpers import toy  # noqa: F401 (a fixture)
from _tool_helpers import CONFIG, FIXTURES, run_tool
from backbones.checkpoint import CheckpointError, read_checkpoint


# -------------------------------------------------------------------------------- 9. misleading or raw errors
def test_random_bytes_and_a_truncated_pth_are_named_without_pickle_advice(tmp_path):
    noise = tmp_path / 'noise.pth'
    noise.write_bytes(bytes(range(256)) * 16)
    with pytest.raises(CheckpointError) as error:
        read_checkpoint(str(noise))
    assert str(error.value).startswith(f'{noise}: cannot be loaded: not a PyTorch checkpoint')
    assert 'trust-pickle' not in str(error.value) and 'pickled' not in str(error.value)
    truncated = tmp_path / 'truncated.pth'
    torch.save({'w': torch.ones(1000)}, truncated)
    truncate(truncated, keep=truncated.stat().st_size // 2)
    with pytest.raises(CheckpointError) as error:
        read_checkpoint(str(truncated))
    assert str(error.value).startswith(f'{truncated}: cannot be loaded: a zip archive')
    assert 'truncated' in str(error.value) and 'trust-pickle' not in str(error.value)


class _RunsCode:
    """A crafted payload: unpickling it would run a shell command (which writes ``marker``)."""
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os
        return os.system, (f'touch {self.marker}',)


@pytest.mark.parametrize('save', [torch.save, lambda obj, path: path.write_bytes(__import__('pickle').dumps(obj, protocol=2))],
                         ids=['zip', 'plain-pickle'])
def test_a_checkpoint_refused_for_its_payload_is_not_called_damaged(tmp_path, save):
    """Issue 46.7: an intact file whose pickle would call os.system used to be called "damaged or truncated ...
    copy or save it again"; it is refused for what it holds, and nothing runs."""
    marker, path = tmp_path / 'ran', tmp_path / 'crafted.pth'
    save({'x': _RunsCode(marker)}, path)
    with pytest.raises(CheckpointError) as error:
        read_checkpoint(str(path))
    message = str(error.value)
    assert message.startswith(f'{path}: torch.load(weights_only=True) refused it for what it holds, not for damage: '
                              'its pickle calls posix.system') or 'calls nt.system' in message, message
    assert 'damaged or truncated' not in message and 'copy' not in message and '\n' not in message
    assert not marker.exists()


@pytest.mark.parametrize('argv', [
    lambda blocked: ['tools/pipeline.py', 'configs/pipelines/demo.py', '--work-dir', blocked / 'run', '--dry-run'],
    lambda blocked: ['tools/leaderboard.py', blocked.parent / 'runs', '--out', blocked / 'board.md'],
], ids=['pipeline', 'leaderboard'])
def test_an_unwritable_output_is_one_line(tmp_path, argv):
    blocked = tmp_path / 'a_file'
    blocked.write_text('')  # a folder under a file cannot be made, even by root
    (tmp_path / 'runs').mkdir()  # one result to tabulate (a folder without any is refused before writing)
    (tmp_path / 'runs' / 'result.json').write_text(json.dumps(dict(
        task='seg', dataset='ade20k', backbone='vit_demo_patch8_64', pretrain=dict(recipe='mae', epochs=6),
        metrics=dict(mIoU=41.5), eval='ss')))
    result = run_tool(*argv(blocked))
    assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and str(blocked) in result.stderr


def test_convert_checkpoint_names_an_unwritable_output(tmp_path, capsys):
    from backbones import create_model
    src = tmp_path / 'src.pth'
    torch.save({'model': create_model('vit_demo_patch8_64', depth=1).state_dict()}, src)
    blocked = tmp_path / 'a_file'
    blocked.write_text('')
    assert tool('convert_checkpoint').cli([str(src), str(blocked / 'out.pth')]) == 2
    assert f'error: cannot write {blocked}/out.pth: ' in capsys.readouterr().err


@pytest.fixture
def code_pickle(tmp_path):
    """A checkpoint holding an object besides its tensors, which weights_only loading refuses."""
    import argparse
    path = tmp_path / 'with_args.pth'
    torch.save({'state_dict': {'linear.weight': torch.zeros(1, 4)}, 'args': argparse.Namespace(lr=1)}, path)
    return path


def test_resume_from_a_refused_pickle_gives_vitbench_s_message(toy, tmp_path, code_pickle, capsys):
    assert toy(CONFIG, '--work-dir', tmp_path, '--resume', code_pickle) == 2
    err = capsys.readouterr().err
    assert f'error: --resume {code_pickle}: torch.load(weights_only=True) refused it' in err
    assert 'argparse.Namespace' in err and 'Traceback' not in err and 'UnpicklingError' not in err


def test_test_tool_on_a_refused_pickle_gives_vitbench_s_message(tmp_path, code_pickle, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    test = tool('test')
    argv = [str(CONFIG), str(code_pickle), '--work-dir', str(tmp_path)]
    assert exit_status(lambda: test.run_main(lambda: test.main(argv))) == 2
    assert f'error: checkpoint {code_pickle}: torch.load(weights_only=True) refused it' in capsys.readouterr().err
