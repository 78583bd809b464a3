"""tools/test.py --show-dir / --out on the tiny demo data, one test per task: the drawn images exist, and the saved
predictions load back and agree with the metric the same run wrote into result.json (recomputed from them)."""
import hashlib
import json
import pickle
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.config import Config
from mmengine.registry import MODELS, DefaultScope, init_default_scope
from PIL import Image

from test_seg_train import tools_test  # noqa: F401  (tools/test.py loaded as a module)
from harness import demo_data
from vitbench.results import per_image
from vitbench.results.schema import evaluation_dir
from harness.demo_data.ade20k import (BUILDING, CAR, GRASS, MOUNTAIN, PERSON, ROAD, SIDEWALK, SKY, TREE, WATER,
                                       WINDOWPANE)

REPO = Path(__file__).resolve().parents[1]
SEG, DET, CLS = (REPO / 'configs' / 'demo' / name for name in
                 ('upernet_demo.py', 'maskrcnn_demo.py', 'transfer_cifar10_demo.py'))


@pytest.fixture(autouse=True)
def away_from_the_repo(tmp_path, monkeypatch):
    """Run where the configs' relative data roots (data/demo/...) do not exist: a test reads only the test split
    it is given (the training set once had to be there for --show-dir; CI's fresh clone has none)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope='module')
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['ade20k', 'coco', 'cifar10']), str(root), seed=0, scale='tiny',
                              workers=1, log=lambda message: None) == []
    return root


def loader_options(data_root, batch_size: int) -> dict:
    return {'test_dataloader.dataset.data_root': str(data_root), 'test_dataloader.num_workers': 0,
            'test_dataloader.persistent_workers': False, 'test_dataloader.batch_size': batch_size}


def untrained_checkpoint(config: Path, options: dict, path: Path, favoured=()) -> Path:
    """The config's model with random weights, saved as a runner checkpoint: what the saved predictions are checked
    against is the same run's metric, so trained weights add nothing but minutes. Noise on every weight makes the
    predictions vary from pixel to pixel (as built, an untrained head gives one class everywhere); the segmentation
    head predicts the ``favoured`` classes only (the demo draws eleven of the 150), so that some pixels come out
    right."""
    cfg = Config.fromfile(config)
    cfg.merge_from_dict(options)
    init_default_scope(cfg.default_scope)
    torch.manual_seed(0)  # the initial weights too: not whatever the tests before left the global generator at
    with DefaultScope.overwrite_default_scope(cfg.default_scope):
        model = MODELS.build(cfg.model)
    generator = torch.Generator().manual_seed(0)
    state = {k: v + 0.2 * torch.randn(v.shape, generator=generator) if k.endswith('weight') and v.dim() > 1 else v
             for k, v in model.state_dict().items()}
    if favoured:  # the other classes' logits: -1e30 whatever the (noisy, large) features
        others = torch.ones(len(state['decode_head.conv_seg.bias']), dtype=torch.bool)
        others[list(favoured)] = False
        state['decode_head.conv_seg.weight'][others] = 0.0
        state['decode_head.conv_seg.bias'][others] = -1e30
    torch.save({'state_dict': state, 'meta': {}}, path)
    return path


def run(tools_test, config: Path, options: dict, tmp_path: Path, *extra: str, favoured=()) -> dict:
    checkpoint = untrained_checkpoint(config, options, tmp_path / 'weights.pth', favoured)
    # a visualizer of its own: mmengine hands an existing instance of the same name back, save_dir unchanged
    options = dict(options, **{'visualizer.name': f'vis_{tmp_path.name}'})
    tools_test.main([str(config), str(checkpoint), '--work-dir', str(tmp_path / 'work'), *extra,
                     '--cfg-options', *[f'{k}={v}' for k, v in options.items()]])
    return json.loads((evaluated(tmp_path) / 'result.json').read_text())


def evaluated(tmp_path: Path) -> Path:
    """Where tools/test.py of weights.pth with --work-dir tmp_path/work writes its record (issue 46.1)."""
    return Path(evaluation_dir(str(tmp_path / 'work'), 'weights.pth'))


def test_segmentation_draws_every_image_and_saves_png_label_maps(tools_test, tiny, tmp_path):  # noqa: F811
    data = tiny / 'ade20k' / 'ADEChallengeData2016'
    options = loader_options(data, 1)  # the images differ in size
    demo_classes = [label - 1 for label in (BUILDING, SKY, TREE, ROAD, WINDOWPANE, GRASS, SIDEWALK, PERSON, MOUNTAIN,
                                            CAR, WATER)]  # reduce_zero_label: ADE20k id - 1
    record = run(tools_test, SEG, options, tmp_path, '--show-dir', str(tmp_path / 'show'), '--out',
                 str(tmp_path / 'pred'), favoured=demo_classes)
    names = sorted(p.stem for p in (data / 'images' / 'validation').glob('*.jpg'))
    drawn = sorted((tmp_path / 'show' / 'vis_data' / 'vis_image').glob('*.png'))
    assert [p.name for p in drawn] == [f'test_{n}.jpg_0.png' for n in names]
    saved = sorted((tmp_path / 'pred').glob('*.png'))
    assert [p.stem for p in saved] == names
    # aAcc recomputed from the PNGs: the dataset's own indices (1-150; 0 = unlabelled, not counted)
    right = labelled = 0
    for png in saved:
        pred = np.array(Image.open(png))
        truth = np.array(Image.open(data / 'annotations' / 'validation' / png.name))
        assert pred.shape == truth.shape and pred.min() >= 1
        right += int(((pred == truth) & (truth > 0)).sum())
        labelled += int((truth > 0).sum())
    assert record['metrics']['aAcc'] > 0  # the recomputation compares something
    assert 100 * right / labelled == pytest.approx(record['metrics']['aAcc'], abs=0.01)
    # the per-image evidence the leaderboard bootstraps: each image's intersection and union per class, recomputed
    # from the same PNGs, and the run's mIoU from them
    assert record['per_image'] == ['mIoU']
    evidence = per_image.read(str(evaluated(tmp_path) / per_image.FILE))['mIoU']
    assert evidence.ids.tolist() == [f'validation/{n}.jpg' for n in names]
    for row, png in enumerate(saved):
        pred = np.array(Image.open(png)).astype(int) - 1
        truth = np.array(Image.open(data / 'annotations' / 'validation' / png.name)).astype(int) - 1
        counted = truth >= 0
        for c in np.unique(np.concatenate([pred[counted], truth[counted]])):
            both = ((pred == c) & (truth == c) & counted).sum()
            either = (((pred == c) | (truth == c)) & counted).sum()
            assert (evidence.intersect[row, c], evidence.union[row, c]) == (both, either)
    assert evidence.value(np.ones(len(names))) == pytest.approx(record['metrics']['mIoU'], abs=0.005)


def test_detection_draws_every_image_and_dumps_what_coco_ap_scores(tools_test, tiny, tmp_path):  # noqa: F811
    from mmengine.evaluator import Evaluator
    coco = tiny / 'coco'
    options = dict(loader_options(coco, 3), **{
        'test_evaluator.ann_file': f'{coco}/annotations/instances_val2017.json',
        'model.test_cfg.rcnn.score_thr': 0.0, 'model.test_cfg.rcnn.max_per_img': 10})  # untrained: still boxes
    out = tmp_path / 'pred.pkl'
    record = run(tools_test, DET, options, tmp_path, '--show-dir', str(tmp_path / 'show'), '--out', str(out))
    images = sorted(p.name for p in (coco / 'val2017').glob('*.jpg'))
    assert sorted(p.name for p in (tmp_path / 'show').iterdir()) == images
    with open(out, 'rb') as f:
        predictions = pickle.load(f)
    # one entry per test image, the ground truth left out; boxes, scores, labels and RLE masks of that image's size
    annotations = json.loads((coco / 'annotations' / 'instances_val2017.json').read_text())
    sizes = {image['id']: [image['height'], image['width']] for image in annotations['images']}
    assert sorted(p['img_id'] for p in predictions) == sorted(sizes)
    for p in predictions:
        instances = p['pred_instances']
        n = len(instances['scores'])
        assert 0 < n <= 10 and instances['bboxes'].shape == (n, 4) and 'gt_instances' not in p
        assert all(0 <= label < 6 for label in instances['labels'].tolist())
        assert len(instances['masks']) == n and all(m['size'] == sizes[p['img_id']] for m in instances['masks'])
    # mmdet's offline evaluation (its tools/analysis_tools/eval_metric.py) reads the dump back into CocoMetric
    # and gives the run's AP (untrained weights: 0; the format is what this checks)
    cfg = Config.fromfile(DET)
    cfg.merge_from_dict(options)
    init_default_scope('mmdet')
    evaluator = Evaluator(cfg.test_evaluator)
    evaluator.dataset_meta = dict(classes=cfg.classes)
    metrics = evaluator.offline_evaluate(predictions)
    assert 100 * metrics['coco/bbox_mAP'] == pytest.approx(record['metrics']['bbox_mAP'], abs=0.05)
    assert 100 * metrics['coco/segm_mAP'] == pytest.approx(record['metrics']['segm_mAP'], abs=0.05)
    # the per-image evidence beside it (pycocotools' matches; tests/test_coco_ap.py checks it against pycocotools)
    assert record['per_image'] == ['bbox_mAP', 'segm_mAP']
    evidence = per_image.read(str(evaluated(tmp_path) / per_image.FILE))
    assert sorted(evidence['bbox_mAP'].ids.tolist()) == sorted(sizes)
    for name in ('bbox_mAP', 'segm_mAP'):
        assert evidence[name].value(np.ones(len(sizes))) == pytest.approx(record['metrics'][name], abs=0.05)


def test_classification_dumps_scores_and_labels_and_refuses_to_draw(tools_test, tiny, tmp_path, capsys):  # noqa: F811
    options = loader_options(tiny / 'cifar10', 16)
    out = tmp_path / 'pred.pkl'
    record = run(tools_test, CLS, options, tmp_path, '--out', str(out))
    with open(out, 'rb') as f:
        predictions = pickle.load(f)
    scores = torch.stack([p['pred_score'] for p in predictions])
    labels = torch.tensor([int(p['gt_label']) for p in predictions])
    assert scores.shape == (len(predictions), 10) and len(predictions) > 16  # several batches, all kept
    top1 = 100 * (scores.argmax(1) == labels).double().mean().item()
    top5 = 100 * (scores.topk(5).indices == labels[:, None]).any(1).double().mean().item()
    assert top5 > 0 and (top1, top5) == pytest.approx((record['metrics']['top1'], record['metrics']['top5']), abs=1e-6)
    # the per-image evidence: each image's top-1 correctness, in the order of the dump
    assert record['per_image'] == ['top1']
    evidence = per_image.read(str(evaluated(tmp_path) / per_image.FILE))['top1']
    assert evidence.correct.tolist() == (scores.argmax(1) == labels).double().tolist()
    assert len(set(evidence.ids.tolist())) == len(predictions) and evidence.value(np.ones(len(labels))) == top1

    with pytest.raises(SystemExit) as stop:  # no image to draw: one line, before anything is built
        tools_test.run_main(lambda: tools_test.main([str(CLS), str(tmp_path / 'weights.pth'), '--show-dir',
                                                     str(tmp_path / 'show')]))
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith('error: --show-dir:') and '--out FILE.pkl' in err and '\n' not in err
    assert not (tmp_path / 'show').exists()


@pytest.mark.parametrize('config, out, expected', [
    (CLS, 'pred', 'expected a pickle file name ending in .pkl'),
    (DET, 'pred.json', 'expected a pickle file name ending in .pkl'),
    (SEG, 'pred.pkl', 'name a directory'),
])
def test_out_of_the_wrong_kind_is_refused_in_one_line(tools_test, tmp_path, config, out, expected):  # noqa: F811
    cfg = Config.fromfile(config)
    with pytest.raises(tools_test.ConfigError, match=expected) as refused:
        tools_test.save_predictions(cfg, str(tmp_path / out))
    assert '\n' not in str(refused.value) and str(tmp_path / out) in str(refused.value)


def test_an_evaluation_in_a_training_s_work_dir_never_replaces_its_record(tools_test, tiny, tmp_path):  # noqa: F811
    """Issue 46.1: tools/test.py of another checkpoint with --work-dir of a finished training replaced that
    training's result.json and per_image.npz (and the pipeline took them as the training's). It writes its own
    record, naming the checkpoint it scored and its sha256; the training's files stay as they were."""
    work = tmp_path / 'work'
    work.mkdir()
    training = {'task': 'transfer', 'metrics': {'top1': 26.0}, 'run': {'kind': 'training', 'id': 'a1'}}
    (work / 'result.json').write_text(json.dumps(training))
    (work / per_image.FILE).write_bytes(b'the training\'s evidence')
    record = run(tools_test, CLS, loader_options(tiny / 'cifar10', 50), tmp_path)
    assert json.loads((work / 'result.json').read_text()) == training
    assert (work / per_image.FILE).read_bytes() == b'the training\'s evidence'
    weights = tmp_path / 'weights.pth'
    assert record['run']['kind'] == 'evaluation' and record['run']['checkpoint']['path'] == str(weights)
    assert record['run']['checkpoint']['sha256'] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert record['run']['checkpoint']['final'] is None  # a file no vitbench training wrote: it does not say
    assert record['schedule'] is None and 'top1' in record['metrics']
    assert (evaluated(tmp_path) / per_image.FILE).exists()
