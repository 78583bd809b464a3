"""Fault injection, inputs (issue 19): every malformed input gets a message naming the file or key and the fix
(exit status 2 from the tools), or is skipped and counted with an explicit option — never taken silently.

Here configs and options: keys nothing reads, loop-argument typos, batch sizes below 1, warm-ups longer than the
run, a leaderboard of no or non-finite results, ``--amp`` on a CPU without bfloat16 instructions. Data: in
test_faults_inputs_data.py; files (checkpoints, pickles, unwritable outputs): in test_faults_inputs_files.py."""
import pytest
import torch
from mmengine.config import Config

from _input_fault_helpers import tool, toy_config
from _input_fault_helpers import toy  # noqa: F401 (a fixture)
from _tool_helpers import CONFIG, run_tool


# ----------------------------------------------------------------------------------- 8. silently accepted input
def test_a_top_level_cfg_option_nothing_reads_is_refused(tmp_path):
    result = run_tool('tools/train.py', CONFIG, '--work-dir', tmp_path, '--cfg-options', 'max_iters=2')
    assert result.returncode == 2 and 'Traceback' not in result.stderr
    assert "--cfg-options max_iters: 'max_iters' is not a key of" in result.stderr
    assert "did you mean 'train_cfg.max_iters'?" in result.stderr
    assert not list(tmp_path.glob('*.pth'))  # nothing ran


def test_a_cfg_option_on_a_variable_the_config_already_read_is_refused(tmp_path):
    """Issue 35.3: `max_epochs = 40` went into train_cfg and the schedulers when the config was parsed; setting it
    afterwards used to log max_epochs = 2 and train 40 epochs."""
    result = run_tool('tools/train.py', 'configs/demo/sup_demo.py', '--work-dir', tmp_path, '--cfg-options',
                      'max_epochs=2')
    assert result.returncode == 2 and 'Traceback' not in result.stderr
    assert ("--cfg-options max_epochs: 'max_epochs' is a variable of configs/demo/sup_demo.py, read when the config "
            "was parsed and by nothing after, so it would be ignored; set what it went into, e.g. "
            "'train_cfg.max_epochs'") in result.stderr
    assert not list(tmp_path.glob('*.pth'))  # nothing ran


def test_a_learning_rate_of_zero_is_refused_for_training(toy, tmp_path, capsys):
    """Issue 35.3: lr 0 trained, exited 0 and recorded untrained weights as a trained backbone."""
    assert toy(CONFIG, '--work-dir', tmp_path, '--cfg-options', 'optim_wrapper.optimizer.lr=0') == 2
    err = capsys.readouterr().err
    assert f'error: {CONFIG}: optim_wrapper.optimizer.lr is 0: nothing would train' in err
    assert "model.trainable='linear'" in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob('*.pth'))


def test_a_dataloader_without_a_batch_an_epoch_is_refused_naming_batch_and_dataset_size(toy, tmp_path, capsys):
    """Issue 35.3: a batch larger than the dataset (drop_last) trained 0 iterations and wrote result.json, or with a
    schedule converted to iterations died on `epoch_length must be a positive integer, but got 0`."""
    assert toy(CONFIG, '--work-dir', tmp_path, '--cfg-options', 'train_dataloader.batch_size=64',
               'train_dataloader.drop_last=True') == 2
    err = capsys.readouterr().err
    assert (f'error: {CONFIG}: train_dataloader: 32 samples in batches of 64 with drop_last=True make no batch an '
            'epoch (per process); lower train_dataloader.batch_size to at most 32 or set '
            'train_dataloader.drop_last=False') in err
    assert not list(tmp_path.glob('*.pth'))


def test_experiment_key_typos_are_refused(toy, tmp_path, capsys):
    config = toy_config(tmp_path, "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64', "
                                  "pretrain=dict(recipe='mae', epoch=5))")
    assert toy(config, '--work-dir', tmp_path, '--cfg-options', 'experiment.bakbone=deit3_small_patch16_224') == 2
    err = capsys.readouterr().err
    assert "experiment.bakbone: not an experiment key" in err and "did you mean 'backbone'?" in err
    assert "experiment.pretrain.epoch: not a key of experiment.pretrain" in err and "did you mean 'epochs'?" in err


def test_a_leaderboard_of_no_result_is_refused_not_a_board_of_paper_rows(tmp_path, capsys):
    """Issue 33: a folder without any result.json gave exit 0 and the paper tables alone."""
    assert tool('leaderboard').main([str(tmp_path)]) == 2
    assert f'error: no result.json under {tmp_path}' in capsys.readouterr().err


@pytest.mark.parametrize('value', ['NaN', 'Infinity', '-Infinity'])
def test_the_leaderboard_refuses_non_finite_metrics(tmp_path, capsys, value):
    path = tmp_path / 'run' / 'result.json'
    path.parent.mkdir()
    path.write_text('{"task": "seg", "dataset": "ade20k", "backbone": "vit_demo_patch8_64", "pretrain": {"recipe": '
                    f'"mae", "epochs": 6, "checkpoint": null}}, "metrics": {{"mIoU": {value}}}, "eval": "ss"}}')
    assert tool('leaderboard').main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: key 'metrics.mIoU' is" in err and 'expected a finite number' in err


@pytest.mark.parametrize('text, options, message', [
    ('', ['train_cfg.max_iter=2'], "train_cfg.max_iter: not an argument of IterBasedTrainLoop (it takes max_iters, "
                                   "val_begin, val_interval, dynamic_intervals, by_epoch) (did you mean 'max_iters'?)"),
    ('', ['train_dataloader.batch_size=-4'], 'train_dataloader.batch_size is -4: expected a whole number >= 1'),
    ("param_scheduler = [dict(type='LinearLR', by_epoch=False, begin=0, end=10), "
     "dict(type='CosineAnnealingLR', by_epoch=False, begin=10, end=100)]", [],
     'param_scheduler.0 (LinearLR) warms up until iteration 10, longer than the run (train_cfg.max_iters=4)'),
    # issue 46.6: a traceback at the build (exit 1), or accepted until the first save after a whole epoch
    ('', ['train_dataloader.batchsize=8'], "train_dataloader.batchsize: not an argument of torch's DataLoader nor a "
                                           "key mmengine's Runner reads (did you mean 'batch_size'?)"),
    ('', ['optim_wrapper.optimiser.type=SGD'],
     "optim_wrapper.optimiser: not an argument of OptimWrapper (did you mean 'optimizer'?)"),
    ('', ['optim_wrapper.optimizer.momentun=0.9'],
     "optim_wrapper.optimizer.momentun: not an argument of SGD (did you mean 'momentum'?)"),
    ('', ['default_hooks.checkpoint.intervl=1'],
     "default_hooks.checkpoint.intervl: not an argument of CheckpointHook (did you mean 'interval'?)"),
    ("param_scheduler = [dict(type='LinearLR', by_epoch=False, begin=0, ends=2)]", [],
     "param_scheduler.0.ends: not an argument of LinearLR (did you mean 'end'?)"),
    ("custom_hooks = [dict(type='EmptyCacheHook', before_epoc=True)]", [],
     "custom_hooks.0.before_epoc: not an argument of EmptyCacheHook (did you mean 'before_epoch'?)"),
    ('', ['train_dataloader.sampler.shufle=True'],
     "train_dataloader.sampler.shufle: not an argument of DefaultSampler (did you mean 'shuffle'?)"),
], ids=['loop-argument-typo', 'negative-batch-size', 'warm-up-longer-than-the-run', 'dataloader-typo',
        'optim-wrapper-typo', 'optimizer-typo', 'checkpoint-hook-typo', 'scheduler-typo', 'custom-hook-typo',
        'sampler-typo'])
def test_config_mistakes_are_one_line_naming_the_key(toy, tmp_path, capsys, text, options, message):
    config = toy_config(tmp_path, text)
    assert toy(config, '--work-dir', tmp_path, *(['--cfg-options', *options] if options else [])) == 2
    err = capsys.readouterr().err
    assert f'error: {config}: {message}' in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob('*.pth'))


def test_a_model_or_dataset_typo_and_an_image_size_the_patch_size_does_not_divide_are_refused(toy, tmp_path, capsys):
    """Issue 46.6, on the demo transfer config: refused before any data is read, one line each."""
    assert toy('configs/demo/transfer_cifar10_demo.py', '--work-dir', tmp_path, '--cfg-options',
               'model.backbone.img_size=30', 'model.num_clases=10', 'train_dataloader.dataset.data_prefx=x') == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert [line.removeprefix('error: ').split(': ')[1] for line in lines] == [
        'train_dataloader.dataset.data_prefx', 'model.num_clases', 'model.backbone.img_size is 30'], lines
    assert "not an argument of CIFAR10 (did you mean 'data_prefix'?)" in lines[0]
    assert "not an argument of ImageClassifier (did you mean 'num_classes'?)" in lines[1]
    assert 'the patch size of vit_demo_patch8_64 is 8, which must divide it (e.g. 24)' in lines[2]
    assert not list(tmp_path.iterdir())


def test_an_epoch_based_warm_up_is_compared_in_epochs(tmp_path):
    from harness.experiment.config_checks import config_problems
    cfg = Config(dict(train_cfg=dict(by_epoch=True, max_epochs=1), param_scheduler=[
        dict(type='LinearLR', begin=0, end=1), dict(type='CosineAnnealingLR', begin=1)]))
    assert config_problems(cfg, {}, cfg.keys()) == []  # a warm-up as long as the run is allowed
    cfg.train_cfg.max_epochs = 0.5
    assert config_problems(cfg, {}, cfg.keys()) == [
        'param_scheduler.0 (LinearLR) warms up until epoch 1, longer than the run (train_cfg.max_epochs=0.5): shorten '
        'it (--cfg-options param_scheduler.0.end=N, and the begin of the scheduler that follows it) or train longer']
    cfg.param_scheduler[0].by_epoch = False  # counted in iterations: not comparable with epochs, not checked
    assert config_problems(cfg, {}, cfg.keys()) == []


def test_a_protocol_that_fixes_a_missing_key_is_refused_in_one_line(toy, tmp_path, capsys):
    config = toy_config(tmp_path, "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64', "
                                  "protocol=dict(name='p', settings=['optim_wrapper', 'model.test_cfg.mode']))")
    assert toy(config, '--work-dir', tmp_path) == 2
    err = capsys.readouterr().err
    assert "experiment.protocol (p) fixes 'model.test_cfg.mode', which the config does not have" in err
    assert 'Traceback' not in err and not list(tmp_path.glob('*.pth'))


# ---------------------------------------------------------------------------- 10. --amp without bf16 instructions
AVX2_ONLY = frozenset({'sse4_2', 'avx', 'avx2', 'fma'})


@pytest.mark.skipif(torch.cuda.is_available(), reason='on a GPU --amp is float16 on the GPU')
def test_amp_is_refused_on_a_cpu_without_bf16_instructions(toy, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr('vitbench.engine.cpu_amp.cpu_flags', lambda: AVX2_ONLY, raising=False)
    assert toy(CONFIG, '--work-dir', tmp_path, '--amp') == 2
    err = capsys.readouterr().err
    assert err.startswith('error: --amp: this CPU has no bfloat16 instructions (avx512_bf16 / amx_bf16 missing')
    assert 'train without --amp' in err and len(err.strip().splitlines()) == 1


def test_the_bf16_predicate_reads_the_cpu_flags(tmp_path, monkeypatch):
    from vitbench.engine import cpu_amp
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text('processor\t: 0\nflags\t\t: fpu sse4_2 avx2 avx512f\n')
    assert cpu_amp.cpu_flags(str(cpuinfo)) == {'fpu', 'sse4_2', 'avx2', 'avx512f'}
    for flags, fast in ((AVX2_ONLY, False), (AVX2_ONLY | {'avx512f'}, False), (AVX2_ONLY | {'avx512_bf16'}, True),
                        (AVX2_ONLY | {'amx_bf16', 'amx_tile'}, True)):
        monkeypatch.setattr(cpu_amp, 'cpu_flags', lambda: flags)
        assert cpu_amp.cpu_has_fast_bf16() is fast


def test_benchmark_skips_bf16_rows_on_a_cpu_without_bf16_instructions(monkeypatch, capsys):
    benchmark = tool('benchmark')
    monkeypatch.setattr('vitbench.engine.cpu_amp.cpu_flags', lambda: AVX2_ONLY, raising=False)
    assert benchmark.parse_args(['backbones']).dtypes == ['fp32']
    assert 'skipping the bf16 rows: this CPU has no bfloat16 instructions' in capsys.readouterr().out
    assert benchmark.parse_args(['backbones', '--dtypes', 'fp32,bf16']).dtypes == ['fp32', 'bf16']  # asked for
    monkeypatch.setattr('vitbench.engine.cpu_amp.cpu_flags', lambda: AVX2_ONLY | {'amx_bf16'}, raising=False)
    assert benchmark.parse_args(['backbones']).dtypes == ['fp32', 'bf16']


# ----------------------------------------------------------------------------------- runtime refusals of a known kind
def test_a_runtime_refusal_is_one_line_naming_the_key_with_its_full_path(toy, tmp_path, capsys):
    """Issue 47: the layer-decay constructor refuses when the optimiser is built, inside runner.train(), after every
    config check; it used to end a traceback with a partial key (paramwise_cfg.layer_decay_rate)."""
    decay = ['optim_wrapper.constructor=vitbench.LayerDecayOptimWrapperConstructor',
             'optim_wrapper.paramwise_cfg.layer_decay_rate=0.5']
    assert toy(CONFIG, '--work-dir', tmp_path, '--cfg-options', *decay) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("error: optim_wrapper.paramwise_cfg.backbone='backbone': ToyRegressor has no such "
                           "submodule; give the backbone's attribute path (default 'backbone'; '' for the whole "
                           "model)")
    assert toy(CONFIG, '--work-dir', tmp_path, '--cfg-options', *decay, "optim_wrapper.paramwise_cfg.backbone=''") == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and 'Traceback' not in err
    assert err.startswith('error: ToyRegressor. (ToyRegressor) has no get_layer_id() and no timm group_matcher()')
    assert err.rstrip().endswith('(set optim_wrapper.paramwise_cfg.backbone to its attribute path, or '
                                 'optim_wrapper.paramwise_cfg.layer_decay_rate=1.0)')
    assert not list(tmp_path.glob('*.pth'))  # nothing trained


def test_an_error_of_no_known_kind_keeps_its_traceback(capsys):
    """Only the suite's own refusals are shortened: anything else is raised on, for its traceback."""
    from harness.experiment.cli import run_main
    from vitbench.refusal import RefusalValueError

    def refuse():
        raise RefusalValueError('Traceback (most recent call last):\n  ...\nRefusalValueError: set '
                                'train_dataloader.batch_size to an even number')  # as a worker's re-raise reads

    with pytest.raises(SystemExit) as stop:
        run_main(refuse)
    assert stop.value.code == 2
    assert capsys.readouterr().err == 'error: set train_dataloader.batch_size to an even number\n'

    def fail():
        raise ValueError('an unforeseen problem')

    with pytest.raises(ValueError, match='an unforeseen problem'):
        run_main(fail)


def test_a_pipeline_stage_refused_at_run_time_says_the_key_in_its_failed_line(tmp_path, monkeypatch):
    """The pipeline shows the refusal line of the stage's tools/train.py (its 'error: ...'), not a traceback's end."""
    import os

    from _pipeline_helpers import DEMO, run, write_pipeline
    from _tool_helpers import FIXTURES
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f'_base_ = [{str(CONFIG)!r}]\n'
                      f"experiment = dict(task='pretrain', dataset='toy', backbone={DEMO!r})\n")
    path = write_pipeline(tmp_path, [dict(name='toy', config=str(config), metric='loss', cfg_options={
        'optim_wrapper.constructor': 'vitbench.LayerDecayOptimWrapperConstructor',
        'optim_wrapper.paramwise_cfg.layer_decay_rate': 0.5, 'optim_wrapper.paramwise_cfg.backbone': ''})],
        backbones=[DEMO])
    _, results, out = run(path)
    (result,) = results.values()
    assert result.status == 'failed'
    assert result.detail.startswith('exit status 2: error: ToyRegressor. (ToyRegressor) has no get_layer_id()')
    assert result.detail.endswith('or optim_wrapper.paramwise_cfg.layer_decay_rate=1.0)')
    assert 'Traceback' not in (tmp_path / DEMO / 'toy' / 'pipeline.log').read_text()
