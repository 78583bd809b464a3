"""Fault injection, input data (issue 19): COCO annotations mmdet would drop, a truncated COCO JSON, an ADE20k label
map of another size than its image, truncated ImageNet JPEGs (``--check``, ``skip_corrupt`` in an evaluation)
are named, or skipped and counted with an explicit option."""
import json
import shutil
import subprocess
import sys

import pytest
import torch
from mmengine.config import Config
from PIL import Image

from _input_fault_helpers import truncate
from _tool_helpers import REPO, run_tool
from harness import demo_data


@pytest.fixture(scope='module')
def tiny_imagenet(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    return root / 'imagenet'


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
