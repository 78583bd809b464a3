"""Fault injection into one run of tools/train.py: killed with SIGKILL at a random (seeded) iteration, or in the
middle of writing a checkpoint, then ``--resume``d, it ends with the uninterrupted run's weights and validation
metrics, bit for bit. The toy task draws random numbers everywhere a real run does (augmentation in the main
process or in persistent dataloader workers, dropout, a noisy validation right after each checkpoint), so a
random stream left unrestored shows. Unfinished writes are removed and logged; a missing checkpoint is said."""
import io
import json
import random
import re
import shutil
import signal
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from _tool_helpers import FIXTURES, run_tool
from backbones import create_model
from vitbench.engine.cpu_amp import cpu_has_fast_bf16
from vitbench.engine.checkpoint_integrity import checkpoint_damage, write_digest

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures('checkpoint_policy')]

# config, iterations in all: by iterations (augmentation in the main process), by epochs (4 iterations an epoch,
# augmentation in 2 persistent workers)
RUNS = dict(iters=(FIXTURES / 'toy_random_config.py', 8), epochs=(FIXTURES / 'toy_random_epoch_config.py', 12))
KILLED = -signal.SIGKILL


def train(kind, work_dir, *extra, monkeypatch=None, **faults):
    """tools/train.py on a RUNS config; ``faults`` set the toy FaultHook's environment (kill_at_iter=K, ...)."""
    for name in ('KILL_AT_ITER', 'KILL_IN_FSYNC', 'SLEEP'):
        monkeypatch.delenv(f'VITBENCH_FAULT_{name}', raising=False)
    for name, value in faults.items():
        monkeypatch.setenv(f'VITBENCH_FAULT_{name.upper()}', str(value))
    return run_tool('tools/train.py', RUNS[kind][0], '--work-dir', work_dir, *extra)


def outcome(work_dir):
    """The final weights and the last validation's metrics."""
    metrics = json.loads((Path(work_dir) / 'metrics.jsonl').read_text().splitlines()[-1])
    return torch.load(Path(work_dir) / 'params_rank0.pth'), metrics


def assert_same_run(work_dir, reference):
    params, metrics = outcome(work_dir)
    expected_params, expected_metrics = outcome(reference)
    assert metrics == expected_metrics
    for name, value in expected_params.items():
        torch.testing.assert_close(params[name], value, rtol=0, atol=0, msg=f'{name} differs from the straight run')


def log_of(result):
    return result.stdout + result.stderr


@pytest.fixture(scope='module')
def straight(tmp_path_factory):
    """The uninterrupted runs, by kind."""
    done = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for kind in RUNS:
            done[kind] = tmp_path_factory.mktemp(f'straight_{kind}')
            result = train(kind, done[kind], monkeypatch=monkeypatch)
            assert result.returncode == 0, result.stderr[-3000:]
    return done


@pytest.mark.parametrize('kind', list(RUNS))
def test_killed_at_a_random_iteration_resume_gives_the_uninterrupted_run(kind, straight, tmp_path, monkeypatch):
    iterations = RUNS[kind][1]
    kill_at = random.Random(f'19-{kind}').randint(iterations // 2, iterations - 1)  # past a checkpoint
    killed = train(kind, tmp_path, monkeypatch=monkeypatch, kill_at_iter=kill_at)
    assert killed.returncode == KILLED, log_of(killed)[-3000:]
    assert not (tmp_path / 'params_rank0.pth').exists()
    resumed = train(kind, tmp_path, '--resume', monkeypatch=monkeypatch)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert_same_run(tmp_path, straight[kind])
    assert 'resumed epoch' in log_of(resumed) and 'random states restored' in log_of(resumed)


def test_killed_while_writing_checkpoints_resume_cleans_up_and_gives_the_uninterrupted_run(straight, tmp_path,
                                                                                           monkeypatch):
    # Each checkpoint is one fsync of the atomic writer (iter_2.pth, iter_4.pth, ...; mmengine writes
    # last_checkpoint after it). Killed writing the first: nothing complete, a hidden .iter_2.pth.XXXX.tmp left.
    killed = train('iters', tmp_path, monkeypatch=monkeypatch, kill_in_fsync=1)
    assert killed.returncode == KILLED
    assert [p.name[:12] for p in tmp_path.glob('.*.tmp')] == ['.iter_2.pth.'] and not list(tmp_path.glob('*.pth'))
    # Resumed: the stale file goes (logged), the run says it starts over; killed again writing a later checkpoint.
    write = random.Random('19-write').randint(2, 4)
    again = train('iters', tmp_path, '--resume', monkeypatch=monkeypatch, kill_in_fsync=write)
    assert again.returncode == KILLED
    assert 'removed an unfinished write of a killed process: .iter_2.pth.' in log_of(again)
    assert 'no checkpoint to resume from' in log_of(again)
    assert [p.name[:12] for p in tmp_path.glob('.*.tmp')] == [f'.iter_{2 * write}.pth.']
    # Resumed from the last complete checkpoint: the straight run all the same.
    resumed = train('iters', tmp_path, '--resume', monkeypatch=monkeypatch)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f'resumed epoch: 0, iter: {2 * (write - 1)}' in log_of(resumed)
    assert 'removed an unfinished write' in log_of(resumed) and not list(tmp_path.glob('.*.tmp'))
    assert_same_run(tmp_path, straight['iters'])


def test_killed_while_writing_with_max_keep_ckpts_the_previous_checkpoint_survives(straight, tmp_path, monkeypatch):
    """mmengine removes the oldest kept checkpoint before writing the next: the policy defers that removal until
    the new file is whole, so a kill during the write leaves the previous checkpoint to resume from."""
    keep_one = ('--cfg-options', 'default_hooks.checkpoint.max_keep_ckpts=1')
    killed = train('iters', tmp_path, *keep_one, monkeypatch=monkeypatch, kill_in_fsync=3)  # writing iter_6.pth
    assert killed.returncode == KILLED
    assert sorted(p.name for p in tmp_path.glob('*.pth')) == ['iter_4.pth']  # iter_2 went once iter_4 was whole
    resumed = train('iters', tmp_path, *keep_one, '--resume', monkeypatch=monkeypatch)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert 'resumed epoch: 0, iter: 4' in log_of(resumed)
    assert sorted(p.name for p in tmp_path.glob('*.pth')) == ['iter_8.pth', 'params_rank0.pth']
    assert_same_run(tmp_path, straight['iters'])


def test_resume_when_last_checkpoint_names_a_missing_file_says_so(tmp_path, monkeypatch):
    (tmp_path / 'last_checkpoint').write_text(str(tmp_path / 'iter_6.pth'))
    result = train('iters', tmp_path, '--resume', monkeypatch=monkeypatch)
    assert result.returncode != 0 and not (tmp_path / 'params_rank0.pth').exists()
    assert f'last_checkpoint names {tmp_path / "iter_6.pth"}, which does not exist' in log_of(result)


# where a run is killed after its last training iteration: before the validation that follows the last checkpoint
# (after iteration 8), or while writing result.json (the 6th fsync of the run: param_groups.json, written before
# training, and the 4 checkpoints come first)
AFTER_THE_LAST_CHECKPOINT = dict(before_validation=dict(kill_at_iter=8),
                                 writing_the_record=dict(kill_in_fsync=6))


@pytest.mark.parametrize('where', list(AFTER_THE_LAST_CHECKPOINT))
def test_killed_after_the_last_checkpoint_resume_records_the_same_metrics(where, tmp_path, monkeypatch):
    """Issue 35.1: killed after the checkpoint of the last iteration (before the validation that follows it, or
    while recording), the resumed run used to end without any validation metric in result.json (the loop had
    nothing left to run). It validates then, from the random states of the checkpoint."""
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(RUNS['iters'][0])!r}]\n"
                      "experiment = dict(task='transfer', dataset='cifar10', backbone='vit_demo_patch8_64')\n")
    RUNS['experiment'] = (config, 8)
    try:
        straight = train('experiment', tmp_path / 'straight', monkeypatch=monkeypatch)
        assert straight.returncode == 0, straight.stderr[-3000:]
        killed = train('experiment', tmp_path / 'run', monkeypatch=monkeypatch, **AFTER_THE_LAST_CHECKPOINT[where])
        assert killed.returncode == KILLED and not (tmp_path / 'run' / 'result.json').exists()
        resumed = train('experiment', tmp_path / 'run', '--resume', monkeypatch=monkeypatch)
    finally:
        del RUNS['experiment']
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert 'before the validation that follows it: validating now' in log_of(resumed)
    metrics = [json.loads((tmp_path / d / 'result.json').read_text())['metrics'] for d in ('straight', 'run')]
    assert metrics[0] == metrics[1] and 'mse' in metrics[0]
    assert_same_run(tmp_path / 'run', tmp_path / 'straight')


# ------------------------------------------------------------------------------- issue 46: a resume is the same run

def flipped(raw: bytes, tensor: torch.Tensor, count: int = 200) -> bytes:
    """``raw`` with the lowest exponent bit of the first ``count`` float32 values of ``tensor`` flipped where its
    bytes lie: every value halves or doubles and stays finite."""
    at = raw.find(tensor.numpy().tobytes())
    assert at >= 0, 'the tensor is not stored there'
    count = min(count, tensor.numel())
    values = np.frombuffer(raw[at:at + 4 * count], dtype=np.uint32) ^ np.uint32(1 << 23)
    assert np.isfinite(values.view(np.float32)).all()
    return raw[:at] + values.tobytes() + raw[at + 4 * count:]


def flip_exponent_bits(path: Path, name: str, count: int = 200) -> None:
    """200 floats of the weight ``name`` damaged inside the checkpoint archive, in place (as a bad disk or copy
    would): nothing but the archive's CRC, and the hash written beside it, can tell."""
    content = torch.load(path, map_location='cpu')
    path.write_bytes(flipped(path.read_bytes(), (content.get('state_dict') or content)[name], count))


@pytest.fixture(scope='module')
def copied(tmp_path_factory):
    """A run killed after iteration 5 (checkpoints iter_2, iter_4), copied with ``cp -a run branch``, the original
    then gone: what each test resumes, from a copy of ``branch`` of its own."""
    root = tmp_path_factory.mktemp('killed')
    with pytest.MonkeyPatch.context() as monkeypatch:
        killed = train('iters', root / 'run', monkeypatch=monkeypatch, kill_at_iter=5)
    assert killed.returncode == KILLED, log_of(killed)[-3000:]
    subprocess.run(['cp', '-a', str(root / 'run'), str(root / 'branch')], check=True)
    shutil.rmtree(root / 'run')
    return root / 'branch'


def test_a_copied_work_dir_resumes_its_own_checkpoint(copied, straight, tmp_path, monkeypatch):
    """Issue 46.4: last_checkpoint held an absolute path, so --resume in a copy loaded the original's checkpoint
    (here: refused, the original gone). The pointer names the checkpoint relative to the work dir. A changed
    logging interval does not change the run: resumed, it ends as the run that never stopped."""
    subprocess.run(['cp', '-a', str(copied), str(tmp_path / 'branch')], check=True)
    assert (tmp_path / 'branch' / 'last_checkpoint').read_text() == 'iter_4.pth'
    assert (tmp_path / 'branch' / 'iter_4.pth.sha256').read_text().endswith('  iter_4.pth\n')
    resumed = train('iters', tmp_path / 'branch', '--resume', '--cfg-options', 'default_hooks.logger.interval=3',
                    monkeypatch=monkeypatch)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert 'resumed epoch: 0, iter: 4' in log_of(resumed)
    assert_same_run(tmp_path / 'branch', straight['iters'])


def test_a_resume_that_changes_a_hyper_parameter_is_refused_naming_it(copied, tmp_path, monkeypatch):
    """Issue 46.2: resumed with another learning rate, the run trained with the checkpoint's (the optimizer state
    and the schedule come from it) while result.json and the dumped config said the new one. Refused, one line."""
    subprocess.run(['cp', '-a', str(copied), str(tmp_path / 'branch')], check=True)
    resumed = train('iters', tmp_path / 'branch', '--resume', '--cfg-options', 'optim_wrapper.optimizer.lr=0.5',
                    monkeypatch=monkeypatch)
    assert resumed.returncode == 2 and not (tmp_path / 'branch' / 'params_rank0.pth').exists()
    error = resumed.stderr.strip()
    assert error.startswith('error: --resume:') and '\n' not in error
    assert 'optim_wrapper.optimizer.lr 0.05 -> 0.5' in error


def test_a_resume_on_another_number_of_processes_is_refused_naming_it(copied, tmp_path, monkeypatch):
    """A run resumed on another number of processes trains on another global batch (batch_size per process times
    them) than the one it started with: refused in one line, as a changed key. The checkpoint is rewritten as if
    saved by 2 processes (its digest with it), then resumed on 1."""
    subprocess.run(['cp', '-a', str(copied), str(tmp_path / 'branch')], check=True)
    path = tmp_path / 'branch' / 'iter_4.pth'
    checkpoint = torch.load(path, weights_only=False)
    assert checkpoint['meta']['vitbench_run']['world_size'] == 1
    checkpoint['meta']['vitbench_run']['world_size'] = 2
    torch.save(checkpoint, path)
    write_digest(path, path.read_bytes())
    resumed = train('iters', tmp_path / 'branch', '--resume', monkeypatch=monkeypatch)
    assert resumed.returncode == 2 and not (tmp_path / 'branch' / 'params_rank0.pth').exists()
    error = resumed.stderr.strip()
    assert error.startswith('error: --resume:') and '\n' not in error
    assert 'world_size 2 -> 1' in error


def test_a_damaged_checkpoint_falls_back_to_the_previous_one_on_resume(copied, straight, tmp_path, monkeypatch):
    """Issue 46.3: a checkpoint with flipped exponent bits (finite values) was resumed silently. Its archive's CRC
    names the damaged member; --resume says so and resumes from the latest undamaged checkpoint before it."""
    subprocess.run(['cp', '-a', str(copied), str(tmp_path / 'branch')], check=True)
    flip_exponent_bits(tmp_path / 'branch' / 'iter_4.pth', 'linear.weight')
    resumed = train('iters', tmp_path / 'branch', '--resume', monkeypatch=monkeypatch)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    damaged, used = tmp_path / 'branch' / 'iter_4.pth', tmp_path / 'branch' / 'iter_2.pth'
    line = [s for s in log_of(resumed).splitlines() if s.startswith('--resume:')]
    assert len(line) == 1 and re.fullmatch(
        re.escape(f"--resume: {damaged} is damaged: its archive member 'archive/data/") + r"\d+' fails its CRC check; "
        + re.escape(f'resuming from {used}, the latest undamaged checkpoint before it'), line[0]), line
    assert 'resumed epoch: 0, iter: 2' in log_of(resumed)
    assert_same_run(tmp_path / 'branch', straight['iters'])


def test_a_damaged_checkpoint_is_refused_before_any_load(tmp_path):
    """Issue 46.3, the issue's case: 200 floats of blocks.0.attn.qkv.weight with a flipped exponent bit. The
    archive's CRC names the member, and tools/test.py refuses the file in one line before anything is built; with
    CRCs of its own (the archive rewritten), the sha256 written beside it at save tells."""
    path = tmp_path / 'epoch_4.pth'
    state = {f'backbone.{k}': v for k, v in create_model('vit_demo_patch8_64', num_classes=10).state_dict().items()}
    buffer = io.BytesIO()
    torch.save(dict(state_dict=state, meta={}), buffer)
    path.write_bytes(buffer.getvalue())
    write_digest(str(path), buffer.getvalue())  # as every checkpoint a run saves gets
    assert checkpoint_damage(str(path)) is None
    with zipfile.ZipFile(path) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    weight = state['backbone.blocks.0.attn.qkv.weight']

    flip_exponent_bits(path, 'backbone.blocks.0.attn.qkv.weight')
    assert "its archive member 'archive/data/" in checkpoint_damage(str(path))  # torch names the folder so
    refused = run_tool('tools/test.py', 'configs/demo/transfer_cifar10_demo.py', path)
    error = refused.stderr.strip()
    assert refused.returncode == 2 and '\n' not in error, error
    assert error.startswith(f'error: checkpoint {path} is damaged: its archive member') and 'CRC' in error

    with zipfile.ZipFile(path, 'w') as rewritten:
        for info, data in members:
            rewritten.writestr(info, flipped(data, weight) if weight.numpy().tobytes() in data else data)
    assert zipfile.ZipFile(path).testzip() is None
    assert checkpoint_damage(str(path)).startswith('is damaged: its sha256 ')


@pytest.mark.skipif(torch.cuda.is_available() or not cpu_has_fast_bf16(), reason='bfloat16 training on this CPU')
def test_a_resumed_bfloat16_run_records_bfloat16_or_is_refused(tmp_path, monkeypatch):
    """Issue 46.4: a bf16 run copied and resumed without --amp recorded "precision": "fp32" (trained on in
    float32). The precision is part of the run: resumed without --amp it is refused, with it recorded as bf16."""
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(RUNS['iters'][0])!r}]\n"
                      "experiment = dict(task='transfer', dataset='cifar10', backbone='vit_demo_patch8_64')\n")
    RUNS['experiment'] = (config, 8)
    try:
        killed = train('experiment', tmp_path / 'run', '--amp', monkeypatch=monkeypatch, kill_at_iter=5)
        assert killed.returncode == KILLED, log_of(killed)[-3000:]
        subprocess.run(['cp', '-a', str(tmp_path / 'run'), str(tmp_path / 'branch')], check=True)
        shutil.rmtree(tmp_path / 'run')
        refused = train('experiment', tmp_path / 'branch', '--resume', monkeypatch=monkeypatch)
        resumed = train('experiment', tmp_path / 'branch', '--resume', '--amp', monkeypatch=monkeypatch)
    finally:
        del RUNS['experiment']
    assert refused.returncode == 2 and 'optim_wrapper.type "vitbench.CPUAmpOptimWrapper" -> unset' in \
        refused.stderr
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert json.loads((tmp_path / 'branch' / 'result.json').read_text())['cost']['precision'] == 'bf16'
