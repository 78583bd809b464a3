"""tools/train.py drives mmengine's Runner: checkpoints load on torch >= 2.6 (the checkpoint policy), runs
resume where they stopped, writes are atomic, bad configs fail clearly, and torchrun on CPU gives consistent
ranks."""
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

from _tool_helpers import CONFIG, run_tool, train
from vitbench.engine.checkpoint_integrity import checkpoint_damage

pytestmark = pytest.mark.usefixtures('checkpoint_policy')  # as tools/train.py installs it


def final_params(work_dir):
    return torch.load(Path(work_dir) / 'params_rank0.pth')


@pytest.fixture(scope='module')
def straight_run(tmp_path_factory):
    work_dir = tmp_path_factory.mktemp('straight')
    train(work_dir)
    return work_dir


def test_runner_checkpoint_loads_with_weights_only(straight_run):
    checkpoint = torch.load(straight_run / 'iter_4.pth')  # torch's default: weights_only=True
    assert checkpoint['meta']['iter'] == 4
    assert {'state_dict', 'optimizer', 'message_hub'} <= checkpoint.keys()
    assert (straight_run / 'last_checkpoint').read_text().strip().endswith('iter_4.pth')


def test_resume_continues_from_the_saved_iteration(straight_run, tmp_path):
    train(tmp_path, '--cfg-options', 'train_cfg.max_iters=2')
    assert (tmp_path / 'iter_2.pth').exists() and not (tmp_path / 'iter_4.pth').exists()
    resumed = train(tmp_path, '--resume')
    assert 'resumed epoch: 0, iter: 2' in resumed.stdout + resumed.stderr
    assert torch.load(tmp_path / 'iter_4.pth')['meta']['iter'] == 4
    # Same data order, same optimizer (momentum) state: identical to the run that never stopped.
    for name, value in final_params(straight_run).items():
        torch.testing.assert_close(final_params(tmp_path)[name], value, rtol=0, atol=0)


def test_resume_from_an_explicit_checkpoint(straight_run, tmp_path):
    shutil.copy(straight_run / 'iter_2.pth', tmp_path / 'start.pth')
    train(tmp_path / 'run', '--resume', tmp_path / 'start.pth')
    for name, value in final_params(straight_run).items():
        torch.testing.assert_close(final_params(tmp_path / 'run')[name], value, rtol=0, atol=0)


def test_third_party_pickles_stay_rejected(tmp_path):
    """The allow-list covers mmengine's data types only; arbitrary objects still need weights_only=False."""
    path = tmp_path / 'untrusted.pth'
    torch.save({'model': {}, 'args': __import__('argparse').Namespace(lr=1)}, path)
    with pytest.raises(Exception, match='weights_only|Unsupported global'):
        torch.load(path)


def test_checkpoint_writes_are_atomic(tmp_path, monkeypatch):
    from mmengine.fileio import get_file_backend
    from mmengine.runner import save_checkpoint
    target = tmp_path / 'epoch_1.pth'
    save_checkpoint({'state_dict': {'w': torch.ones(2)}}, str(target))
    assert type(get_file_backend(str(target))).__name__ == 'AtomicLocalBackend'

    def killed(fd):
        raise KeyboardInterrupt('killed while writing')
    monkeypatch.setattr(os, 'fsync', killed)
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint({'state_dict': {'w': torch.zeros(2)}}, str(target))
    torch.testing.assert_close(torch.load(target)['state_dict']['w'], torch.ones(2))
    # no temporary file left; the hash beside it is the whole file's (issue 46.3), not the unfinished one's
    assert sorted(p.name for p in tmp_path.iterdir()) == ['epoch_1.pth', 'epoch_1.pth.sha256']
    assert checkpoint_damage(str(target)) is None


@pytest.mark.parametrize('args, message', [
    (['configs/does_not_exist.py'], "config file 'configs/does_not_exist.py' not found"),
    ([CONFIG, '--cfg-options', 'model.type=NoSuchModel'], 'failed to build: KeyError'),
])
def test_bad_config_is_one_clear_line_and_exit_2(args, message):
    result = run_tool('tools/train.py', *args)
    assert result.returncode == 2
    assert result.stderr.strip().startswith('error: ') and message in result.stderr
    assert 'Traceback' not in result.stderr


def test_test_tool_on_missing_checkpoint_exits_2(tmp_path):
    result = run_tool('tools/test.py', CONFIG, tmp_path / 'missing.pth')
    assert result.returncode == 2 and 'missing.pth' in result.stderr and 'not found' in result.stderr


@pytest.mark.slow
def test_torchrun_two_cpu_ranks(tmp_path):
    torchrun = [str(Path(sys.executable).with_name('torchrun')), '--standalone', '--nproc_per_node', '2']
    result = run_tool('tools/train.py', CONFIG, '--work-dir', tmp_path, '--launcher', 'pytorch',
                      launcher=torchrun)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.glob('*.pth')) == [
        'iter_2.pth', 'iter_4.pth', 'params_rank0.pth', 'params_rank1.pth']
    rank0, rank1 = (torch.load(tmp_path / f'params_rank{r}.pth') for r in (0, 1))
    checkpoint = torch.load(tmp_path / 'iter_4.pth')['state_dict']
    for name, value in rank0.items():
        torch.testing.assert_close(rank1[name], value, rtol=0, atol=0)
        torch.testing.assert_close(checkpoint[name], value, rtol=0, atol=0)
    # 32 samples split over two ranks of batch 4: one epoch is 4 iterations (it would be 8 on one rank).
    assert 'Epoch(train) [1][4/4]' in result.stdout
