"""Mask R-CNN through tools/train.py on the tiny demo COCO: one training iteration and a validation with a
DeiT III and a ViT-Tiny (12 heads) backbone, result.json with box and mask AP, and the metric wiring of the
demo config scored on the ground truth itself."""
import importlib.util
import json
import os.path as osp

import numpy as np
import pytest
import torch
from mmengine.config import Config

from harness import demo_data

pytest.importorskip('mmcv.ops')
# pycocotools 2.0.x calls np.array(copy=False) on numpy 2: harmless, but once per decoded mask.
pytestmark = pytest.mark.filterwarnings('ignore:__array__ implementation:DeprecationWarning')
REPO = osp.dirname(osp.dirname(osp.abspath(__file__)))
DEMO = osp.join(REPO, 'configs/demo/maskrcnn_demo.py')
AP_NAMES = {f'{family}_mAP{suffix}' for family in ('bbox', 'segm') for suffix in ('', '_50', '_75', '_s', '_m', '_l')}
# COCO scores an area range without objects -1: result.json leaves it out (the tiny images hold no large ones)
DEFINED = AP_NAMES - {'bbox_mAP_l', 'segm_mAP_l'}


@pytest.fixture(scope='module')
def coco_root(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('demo'))
    assert demo_data.generate(demo_data.select(['coco']), root, seed=0, scale='tiny', log=lambda m: None) == []
    return osp.join(root, 'coco')


def on_tiny_coco(coco_root):
    """--cfg-options pointing the demo config at the tiny COCO, with small batches and no worker processes."""
    options = [f'val_evaluator.ann_file={coco_root}/annotations/instances_val2017.json']
    for loader, batch in (('train_dataloader', 2), ('val_dataloader', 3)):
        options += [f'{loader}.dataset.data_root={coco_root}', f'{loader}.batch_size={batch}',
                    f'{loader}.num_workers=0', f'{loader}.persistent_workers=False']
    return options


def train(work_dir, *args):
    spec = importlib.util.spec_from_file_location('vitbench_train_tool', osp.join(REPO, 'tools/train.py'))
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    tool.main([DEMO, '--work-dir', str(work_dir), *args])
    return json.loads((work_dir / 'result.json').read_text())


@pytest.mark.parametrize('backbone, depth', [('deit3_small_patch16_224', 5), ('vit_tiny12h_patch16_224', 2)])
def test_one_iteration_and_validation_write_box_and_mask_ap(coco_root, tmp_path, backbone, depth):
    record = train(tmp_path, '--backbone', backbone, '--cfg-options', *on_tiny_coco(coco_root),
                   f'experiment_name=det_{backbone}',  # distinct mmengine logger / visualizer instances
                   f'model.backbone.depth={depth}',    # the swap places out index and global blocks for it
                   'train_cfg.max_iters=1', 'train_cfg.val_interval=1', 'default_hooks.checkpoint=None',
                   'param_scheduler.0.end=1',  # a warm-up no longer than the run (the config check refuses it)
                   # an untrained head's boxes still get scored
                   'model.test_cfg.rcnn.score_thr=0.0', 'model.test_cfg.rcnn.max_per_img=10')
    assert (record['task'], record['dataset'], record['backbone']) == ('det', 'coco-demo', backbone)
    assert record['pretrain']['recipe'] == 'scratch'
    metrics = record['metrics']
    assert DEFINED <= set(metrics) <= AP_NAMES | {'loss'}
    assert all(0 <= metrics[name] <= 100 for name in set(metrics) - {'loss'})
    assert np.isfinite(metrics['loss']) and metrics['loss'] > 0


def ground_truth_as_predictions(dataset):
    """Each image's non-crowd annotations as detections with score 1, masks rasterised from the polygons."""
    from pycocotools import mask as mask_utils
    samples = []
    for i in range(len(dataset)):
        info = dataset.get_data_info(i)
        h, w = info['height'], info['width']
        objects = [inst for inst in info['instances'] if not inst['ignore_flag']]
        masks = [mask_utils.decode(mask_utils.merge(mask_utils.frPyObjects(inst['mask'], h, w)))
                 for inst in objects]
        samples.append(dict(img_id=info['img_id'], ori_shape=(h, w), pred_instances=dict(
            bboxes=torch.tensor([inst['bbox'] for inst in objects], dtype=torch.float32).reshape(-1, 4),
            scores=torch.ones(len(objects)),
            labels=torch.tensor([inst['bbox_label'] for inst in objects], dtype=torch.long),
            masks=torch.from_numpy(np.array(masks, dtype=bool).reshape(-1, h, w)))))
    return samples


def test_ground_truth_scores_ap_100_through_the_demo_config(coco_root):
    """The 6-class label mapping of dataset and metric, and the annotation file, agree (a mix-up scores < 100)."""
    from mmdet.registry import DATASETS
    from mmengine.evaluator import Evaluator
    from mmengine.registry import init_default_scope
    from mmengine.utils import import_modules_from_strings
    cfg = Config.fromfile(DEMO)
    import_modules_from_strings(**cfg.custom_imports)
    init_default_scope(cfg.default_scope)
    dataset = DATASETS.build(dict(cfg.val_dataloader.dataset, data_root=coco_root, pipeline=[]))
    assert dataset.metainfo['classes'] == cfg.classes and cfg.model.roi_head.bbox_head.num_classes == 6
    evaluator = Evaluator(dict(cfg.val_evaluator, ann_file=osp.join(coco_root, 'annotations/instances_val2017.json')))
    evaluator.dataset_meta = dataset.metainfo
    evaluator.process(ground_truth_as_predictions(dataset))
    metrics = evaluator.evaluate(len(dataset))
    assert metrics['coco/bbox_mAP'] == 1.0 and metrics['coco/segm_mAP'] == 1.0
