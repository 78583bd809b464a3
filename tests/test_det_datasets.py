"""vitbench.CocoDataset: mmdet's loader, with errors that show the expected COCO layout or name bad classes."""
import json
import os.path as osp

import pytest
from mmengine.config import Config

pytest.importorskip('mmcv.ops')
REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))


def build(**overrides):
    from mmengine.registry import init_default_scope
    from mmdet.registry import DATASETS

    import downstream  # noqa: F401
    cfg = Config.fromfile(osp.join(REPO, 'configs/_base_/datasets/coco_instance_lsj.py'))
    assert cfg.val_dataloader.dataset.type == 'vitbench.CocoDataset'
    init_default_scope('mmdet')
    return DATASETS.build(dict(cfg.val_dataloader.dataset, pipeline=[], **overrides))


def write_coco(root, categories=('person', 'car')):
    """A one-image, one-box COCO val split."""
    (root / 'val2017').mkdir(parents=True)
    (root / 'annotations').mkdir()
    (root / 'annotations/instances_val2017.json').write_text(json.dumps(dict(
        images=[dict(id=1, file_name='000000000001.jpg', width=32, height=24)],
        annotations=[dict(id=1, image_id=1, category_id=1, bbox=[2, 3, 10, 8], area=80, iscrowd=0,
                          segmentation=[[2, 3, 12, 3, 12, 11, 2, 11]])],
        categories=[dict(id=i + 1, name=name, supercategory='') for i, name in enumerate(categories)])))
    return str(root)


def test_a_wrong_data_root_shows_the_expected_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"(?s)data_root='.*nowhere'.*no annotation file.*"
                                                r"annotations/instances_val2017.json.*val2017/"):
        build(data_root=str(tmp_path / 'nowhere'))
    root = write_coco(tmp_path / 'coco')
    import shutil
    shutil.rmtree(osp.join(root, 'val2017'))
    with pytest.raises(FileNotFoundError, match='no image folder .*val2017'):
        build(data_root=root)


def test_classes_missing_from_the_annotation_file_or_out_of_its_order_are_named(tmp_path):
    root = write_coco(tmp_path / 'coco')
    dataset = build(data_root=root, metainfo=dict(classes=('person', 'car')))
    assert [inst['bbox_label'] for inst in dataset.get_data_info(0)['instances']] == [0]
    with pytest.raises(ValueError, match=r"follow the order of the categories in the file, \['person', 'car'\]"):
        build(data_root=root, metainfo=dict(classes=('car', 'person')))  # mmdet would call persons 'car'
    with pytest.raises(ValueError, match=r"classes \['stopsign'\] are not categories .*'person', 'car'"):
        build(data_root=root, metainfo=dict(classes=('person', 'stopsign')))
