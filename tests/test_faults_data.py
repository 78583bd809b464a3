"""Issue 35.5, data errors as one line: a sample that cannot be read during training names its dataset, index and
files with the --check hint (exit status 2, no traceback), in the main process or in a dataloader worker; a write
that runs out of space names the file, what was written and what is free."""
import errno
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import init_default_scope

from harness import demo_data
from harness.experiment.cli import run_main
from vitbench import fileio
from vitbench.fileio import WriteError, atomic_open
from vitbench.sample_error import SampleError, one_line

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet', 'ade20k']), str(root), scale='tiny',
                              log=lambda m: None) == []
    return root


def test_an_empty_imagenet_jpeg_during_training_is_one_line_naming_it(tiny, tmp_path):
    data = tmp_path / 'imagenet'
    shutil.copytree(tiny / 'imagenet', data)
    broken = sorted((data / 'train').glob('*/*.JPEG'))[0]
    broken.write_bytes(b'')
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={data}', 'num_workers=1', 'persistent_workers=False')]
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/sup_demo.py', '--work-dir',
                             str(tmp_path / 'run'), '--cfg-options', *options, 'train_dataloader.batch_size=8',
                             'train_cfg.max_epochs=1'], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 2, result.stderr[-3000:]
    assert 'Traceback' not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith('error:')]
    assert line.startswith('error: ImageNet sample ') and str(broken) in line
    assert f'python tools/make_demo_data.py --check {data} --dataset NAME' in line  # a worker raised it


def test_a_truncated_ade20k_label_map_names_the_file(tiny, tmp_path):
    import downstream  # noqa: F401  (registers the datasets)
    from mmseg.registry import DATASETS
    data = tmp_path / 'ade'
    shutil.copytree(tiny / 'ade20k' / 'ADEChallengeData2016', data)
    label = sorted((data / 'annotations' / 'training').glob('*.png'))[0]
    label.write_bytes(label.read_bytes()[:100])  # the header survives: the decoder fails mid-file
    cfg = Config.fromfile(str(REPO / 'configs/demo/upernet_demo.py'))
    init_default_scope('mmseg')
    dataset = DATASETS.build(dict(cfg.train_dataloader.dataset, data_root=str(data)))
    index = next(i for i in range(len(dataset)) if dataset.get_data_info(i)['seg_map_path'] == str(label))
    with pytest.raises(SampleError) as error:
        dataset.prepare_data(index)
    assert str(error.value).startswith(f'ADE20KDataset sample {index} (') and str(label) in str(error.value)

    def train():
        raise error.value
    with pytest.raises(SystemExit) as stop:
        run_main(train)
    assert stop.value.code == 2


def test_a_worker_raised_sample_error_prints_its_message_only():
    wrapped = SampleError('Caught SampleError in DataLoader worker process 0.\nOriginal Traceback (most recent call '
                          'last):\n  File "x.py", line 1\nvitbench.sample_error.SampleError: ImageNet sample 3 (a.JPEG): '
                          'OSError: broken')
    assert one_line(wrapped) == 'ImageNet sample 3 (a.JPEG): OSError: broken'


def test_a_full_disk_during_a_checkpoint_names_the_file_and_the_space(tmp_path, monkeypatch):
    """torch.save turns the file's `OSError: [Errno 28]` into `RuntimeError: [enforce fail at inline_container.cc]`;
    the atomic writer finds it behind and says which file, how much was written and what is free."""
    fdopen = os.fdopen

    def filling_up(fd, mode):
        real = fdopen(fd, mode)

        class Full(io.RawIOBase):
            written = 0

            def write(self, data):
                Full.written += len(data)
                if Full.written > 4096:
                    raise OSError(errno.ENOSPC, 'No space left on device')
                return real.write(data)

            def __getattr__(self, name):
                return getattr(real, name)

            def __exit__(self, *exc):
                return real.__exit__(*exc)
        return Full()
    monkeypatch.setattr(fileio.os, 'fdopen', filling_up)
    path = tmp_path / 'epoch_1.pth'
    with pytest.raises(WriteError) as error:
        with atomic_open(str(path)) as f:
            torch.save({'w': torch.ones(100_000)}, f)
    message = str(error.value)
    assert f'{path} could not be written: No space left on device (' in message and 'bytes free in' in message
    assert error.value.errno == errno.ENOSPC and not list(tmp_path.iterdir())  # nothing half-written left


def test_a_coco_box_outside_its_image_stops_training_without_a_traceback(tmp_path):
    """The annotation check named the file, but from inside the Runner: a traceback, exit status 1."""
    pytest.importorskip('mmcv.ops')
    import json
    assert demo_data.generate(demo_data.select(['coco']), str(tmp_path), scale='tiny', log=lambda m: None) == []
    root = tmp_path / 'coco'
    ann = root / 'annotations' / 'instances_train2017.json'
    coco = json.loads(ann.read_text())
    image = coco['images'][0]
    box = next(a for a in coco['annotations'] if a['image_id'] == image['id'])
    box['bbox'] = [image['width'] + 50, image['height'] + 50, 30, 30]
    ann.write_text(json.dumps(coco))
    options = [f'{loader}.dataset.data_root={root}/' for loader in ('train_dataloader', 'val_dataloader')]
    options.append(f'val_evaluator.ann_file={root}/annotations/instances_val2017.json')
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/demo/maskrcnn_demo.py', '--work-dir',
                             str(tmp_path / 'run'), '--cfg-options', *options], cwd=REPO, capture_output=True,
                            text=True, timeout=600, env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr[-3000:]
    assert (f'error: configs/demo/maskrcnn_demo.py: {ann}: annotations that mmdet would drop silently:'
            in result.stderr) and 'bbox lies outside its image' in result.stderr
