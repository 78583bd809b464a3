"""Fault injection, inputs (issue 19): every malformed input gets a message naming the file or key and the fix
(exit status 2 from the tools), or is skipped and counted with an explicit option — never taken silently.

Data: COCO annotations mmdet would drop, a truncated COCO JSON, an ADE20k label map of another size than its
image, truncated ImageNet JPEGs (``--check``, ``skip_corrupt`` in an evaluation). Configs: keys nothing reads,
loop-argument typos, batch sizes below 1, warm-ups longer than the run. Files: non-finite metrics, random or
truncated ``.pth`` files, refused pickles given to ``--resume`` / tools/test.py, unwritable outputs. ``--amp`` on
a CPU without bfloat16 instructions."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from PIL import Image

from _tool_helpers import CONFIG, FIXTURES, REPO, run_tool
from backbones.checkpoint import CheckpointError, read_checkpoint
from vitbench import demo_data


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


@pytest.fixture(scope='module')
def tiny_imagenet(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return root / 'imagenet'


def truncate(path: Path, keep=200):
    path.write_bytes(path.read_bytes()[:keep])  # the header survives: PIL opens it, decoding fails


# ------------------------------------------------------------------------------- 3. COCO annotations mmdet drops
def build_coco(root, **overrides):
    pytest.importorskip('mmcv.ops')
    from mmdet.registry import DATASETS
    from mmengine.registry import init_default_scope

    import downstream  # noqa: F401
    cfg = Config.fromfile(str(REPO / 'configs/_base_/datasets/coco_instance_lsj.py'))
    init_default_scope('mmdet')
    return DATASETS.build(dict(cfg.val_dataloader.dataset, data_root=str(root), pipeline=[],
                               metainfo=dict(classes=('person', 'car')), **overrides))


def write_coco(root, annotations):
    """A one-image val split (32 x 24) with the classes person (1) and car (2)."""
    (root / 'val2017').mkdir(parents=True)
    (root / 'annotations').mkdir()
    path = root / 'annotations/instances_val2017.json'
    path.write_text(json.dumps(dict(
        images=[dict(id=1, file_name='000000000001.jpg', width=32, height=24)],
        annotations=[dict(dict(area=20, iscrowd=0, bbox=[2, 3, 5, 4]), id=i + 1, **a)
                     for i, a in enumerate(annotations)],
        categories=[dict(id=1, name='person', supercategory=''), dict(id=2, name='car', supercategory='')])))
    return path


def test_coco_annotations_mmdet_would_drop_are_named(tmp_path, monkeypatch):
    ann_file = write_coco(tmp_path, [dict(image_id=1, category_id=1), dict(image_id=1, category_id=7),  # unknown class
                                     dict(image_id=99, category_id=2),  # no such image
                                     dict(image_id=1, category_id=2, bbox=[40, 2, 5, 4])])  # right of the 32 px
    with pytest.raises(ValueError) as error:
        build_coco(tmp_path)
    message = str(error.value)
    assert str(ann_file) in message and 'skip_invalid_annotations=True' in message
    for what in ("1 of 4 annotations: category_id is not among the file's categories", '"category_id": 7',
                 "image_id is not among the file's images", '"image_id": 99', 'bbox lies outside its image'):
        assert what in message
    # with the option they are left out, as mmdet would, but counted in the log
    logged = []
    monkeypatch.setattr('downstream.det.datasets.print_log', lambda msg, **kwargs: logged.append(msg))
    dataset = build_coco(tmp_path, skip_invalid_annotations=True)
    assert len(dataset.get_data_info(0)['instances']) == 1
    assert len(logged) == 1 and 'left out 3 invalid annotations' in logged[0]


def test_a_truncated_coco_json_names_the_file(tmp_path):  # 9.
    ann_file = write_coco(tmp_path, [dict(image_id=1, category_id=1)])
    truncate(ann_file, keep=120)
    with pytest.raises(ValueError, match=f'{ann_file}: not valid JSON .*truncated'):
        build_coco(tmp_path)


# --------------------------------------------------------------------------- 4. an ADE20k label map of another size
def test_a_label_map_of_another_size_than_its_image_is_named(tmp_path):
    from mmengine.registry import init_default_scope
    from mmseg.registry import DATASETS

    import downstream  # noqa: F401
    for split in ('training', 'validation'):
        for folder in ('images', 'annotations'):
            (tmp_path / folder / split).mkdir(parents=True)
        Image.new('RGB', (32, 24)).save(tmp_path / 'images' / split / 'ADE_x_00000001.jpg')
        Image.new('L', (32, 24)).save(tmp_path / 'annotations' / split / 'ADE_x_00000001.png')
    label = tmp_path / 'annotations/training/ADE_x_00000002.png'
    Image.new('RGB', (32, 24)).save(tmp_path / 'images/training/ADE_x_00000002.jpg')
    Image.new('L', (16, 12)).save(label)
    dataset = Config.fromfile(str(REPO / 'configs/upernet_deit3_b.py')).train_dataloader.dataset
    init_default_scope('mmseg')
    with pytest.raises(ValueError) as error:
        DATASETS.build(dict(dataset, data_root=str(tmp_path), pipeline=[]))
    assert f'{label} is 16x12, its image' in str(error.value) and '32x24' in str(error.value)
    assert 'nearest-neighbour' in str(error.value) and '--dataset ade20k' in str(error.value)
    validation = dict(dataset, data_root=str(tmp_path), pipeline=[],
                      data_prefix=dict(img_path='images/validation', seg_map_path='annotations/validation'))
    assert len(DATASETS.build(validation)) == 1  # matching pairs pass


# ------------------------------------------------------------------------- 7. truncated images: --check, skip_corrupt
def test_check_decodes_every_image_with_workers_and_a_progress_bar(tiny_imagenet, tmp_path):
    root = tmp_path / 'demo'
    shutil.copytree(tiny_imagenet, root / 'imagenet')
    bad = sorted((root / 'imagenet/val/n01443537').iterdir())[-1]  # not the one image per class read before
    truncate(bad)
    done = subprocess.run([sys.executable, 'tools/make_demo_data.py', '--check', str(root), '--datasets', 'imagenet',
                           '--workers', '2'], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f'imagenet/val/n01443537/{bad.name}: does not decode' in done.stdout and 'truncated' in done.stdout
    n = sum(1 for _ in (root / 'imagenet').rglob('*.JPEG'))
    assert 'imagenet decode' in done.stderr and f'{n}/{n} images' in done.stderr  # the progress bar


def test_skip_corrupt_in_an_evaluation_leaves_the_image_out_and_counts_it(tiny_imagenet, tmp_path):
    from mmengine.dataset import default_collate
    from torch.utils.data import DataLoader

    from pretrain.data import ImageNet
    from pretrain.metrics import Accuracy, ReconstructionLoss
    root = tmp_path / 'imagenet'
    shutil.copytree(tiny_imagenet, root)
    truncate(sorted((root / 'val/n01443537').iterdir())[0])
    pipeline = [dict(type='vitbench.LoadImage', skip_corrupt=True), dict(type='vitbench.ResizeCenterCrop', size=32),
                dict(type='vitbench.PackInputs')]
    dataset = ImageNet(str(root), 'val', pipeline=pipeline, test_mode=True)
    accuracy, reconstruction = Accuracy(), ReconstructionLoss()
    num_classes = len(list((root / 'val').iterdir()))
    # two worker processes: the count of skipped files is the total over them
    for batch in DataLoader(dataset, batch_size=8, num_workers=2, collate_fn=default_collate):
        labels = batch['data_samples']['gt_label']
        predictions = [dict(pred_score=torch.nn.functional.one_hot(label.clamp(min=0), num_classes).float(), gt_label=label,
                            loss=torch.tensor(1.0)) for label in labels]
        accuracy.process(batch, predictions)
        reconstruction.process(batch, predictions)
    assert accuracy.compute_metrics(accuracy.results) == dict(top1=100.0, top5=100.0, skipped_images=1)
    assert reconstruction.compute_metrics(reconstruction.results) == dict(reconstruction_mse=1.0, skipped_images=1)
    assert dataset.pipeline.transforms[0].num_skipped == 1


def test_skip_corrupt_in_a_validation_pipeline_is_counted_in_result_json(tiny_imagenet, tmp_path):
    """End to end (about 10 s): before, the run crashed after training with mmengine's 'Test time pipline should
    not get `None` data_sample' and left no result.json."""
    root = tmp_path / 'imagenet'
    shutil.copytree(tiny_imagenet, root)
    truncate(sorted((root / 'val/n01443537').iterdir())[0])
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={root}', 'num_workers=0', 'persistent_workers=False')]
    result = run_tool('tools/train.py', 'configs/demo/deit3_sup_demo.py', '--work-dir', tmp_path / 'run',
                      '--cfg-options', *options, 'train_dataloader.batch_size=8', 'val_dataloader.batch_size=10',
                      'train_cfg.max_epochs=1', 'train_cfg.val_interval=1',
                      'val_dataloader.dataset.pipeline.0.skip_corrupt=True')
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / 'run/result.json').read_text())
    assert record['metrics']['skipped_images'] == 1 and 'top1' in record['metrics']
    assert '1 skipped so far in all' in result.stdout + result.stderr


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


@pytest.mark.parametrize('text, options, message', [
    ('', ['train_cfg.max_iter=2'], "train_cfg.max_iter: not an argument of IterBasedTrainLoop (it takes max_iters, "
                                   "val_begin, val_interval, dynamic_intervals, by_epoch) (did you mean 'max_iters'?)"),
    ('', ['train_dataloader.batch_size=-4'], 'train_dataloader.batch_size is -4: expected a whole number >= 1'),
    ("param_scheduler = [dict(type='LinearLR', by_epoch=False, begin=0, end=10), "
     "dict(type='CosineAnnealingLR', by_epoch=False, begin=10, end=100)]", [],
     'param_scheduler.0 (LinearLR) warms up until iteration 10, longer than the run (train_cfg.max_iters=4)'),
], ids=['loop-argument-typo', 'negative-batch-size', 'warm-up-longer-than-the-run'])
def test_config_mistakes_are_one_line_naming_the_key(toy, tmp_path, capsys, text, options, message):
    config = toy_config(tmp_path, text)
    assert toy(config, '--work-dir', tmp_path, *(['--cfg-options', *options] if options else [])) == 2
    err = capsys.readouterr().err
    assert f'error: {config}: {message}' in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.glob('*.pth'))


def test_an_epoch_based_warm_up_is_compared_in_epochs(tmp_path):
    from vitbench.experiment.config_checks import config_problems
    cfg = Config(dict(train_cfg=dict(by_epoch=True, max_epochs=1), param_scheduler=[
        dict(type='LinearLR', begin=0, end=1), dict(type='CosineAnnealingLR', begin=1)]))
    assert config_problems(cfg, {}, cfg.keys()) == []  # a warm-up as long as the run is allowed
    cfg.train_cfg.max_epochs = 0.5
    assert config_problems(cfg, {}, cfg.keys()) == [
        'param_scheduler.0 (LinearLR) warms up until epoch 1, longer than the run (train_cfg.max_epochs=0.5): shorten '
        'it (--cfg-options param_scheduler.0.end=N, and the begin of the scheduler that follows it) or train longer']
    cfg.param_scheduler[0].by_epoch = False  # counted in iterations: not comparable with epochs, not checked
    assert config_problems(cfg, {}, cfg.keys()) == []


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


def test_a_protocol_that_fixes_a_missing_key_is_refused_in_one_line(toy, tmp_path, capsys):
    config = toy_config(tmp_path, "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64', "
                                  "protocol=dict(name='p', settings=['optim_wrapper', 'model.test_cfg.mode']))")
    assert toy(config, '--work-dir', tmp_path) == 2
    err = capsys.readouterr().err
    assert "experiment.protocol (p) fixes 'model.test_cfg.mode', which the config does not have" in err
    assert 'Traceback' not in err and not list(tmp_path.glob('*.pth'))
