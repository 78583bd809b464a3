"""COCO AP of a resampled test set from one evaluation's per-image matches (vitbench.results.coco_ap) equals
pycocotools run on that resampled set, built for real: each image repeated, the copies given new ids."""
import contextlib
import copy
import io

import numpy as np
import pytest

from vitbench.results import per_image
from vitbench.results.coco_ap import CocoAP, coco_evidence

pytest.importorskip('pycocotools')
from pycocotools import mask as mask_utils  # noqa: E402
from pycocotools.coco import COCO  # noqa: E402
from pycocotools.cocoeval import COCOeval  # noqa: E402

# pycocotools 2.0.x calls np.array(copy=False) on numpy 2: harmless, but once per decoded mask.
pytestmark = pytest.mark.filterwarnings('ignore:__array__ implementation:DeprecationWarning')
SIZE = 64  # images are SIZE x SIZE
CATEGORIES = [1, 2, 4, 7]  # 7 has detections but no ground truth: left out of the mean


def polygon(x, y, w, h):
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def synthetic_coco(seed=0, images=20, tie_scores=False):
    """Ground truth (a few crowds, an image without objects, a category without any) and detections: jittered
    copies of most objects, some with the wrong category, and background boxes; continuous scores unless
    ``tie_scores`` (then rounded to one decimal: many exact ties)."""
    rng = np.random.default_rng(seed)
    image_ids = sorted(rng.choice(np.arange(1, 1000), size=images, replace=False).tolist())  # not 1..n
    gts, dets = [], []
    for n, image_id in enumerate(image_ids):
        objects = 0 if n == 3 else int(rng.integers(1, 7))
        for _ in range(objects):
            w, h = rng.uniform(6, 30, size=2)
            x, y = rng.uniform(0, SIZE - w), rng.uniform(0, SIZE - h)
            crowd = int(rng.random() < 0.1)
            category = int(rng.choice(CATEGORIES[:3]))
            gts.append(dict(image_id=image_id, category_id=category, bbox=[x, y, w, h], area=w * h, iscrowd=crowd,
                            segmentation=polygon(x, y, w, h)))
            for _ in range(int(rng.integers(0, 3))):  # 0, 1 or 2 detections of it (a duplicate is a false positive)
                jitter = rng.normal(0, 0.12 * np.array([w, h, w, h]))
                dx, dy, dw, dh = jitter
                box = [max(0.0, x + dx), max(0.0, y + dy), max(1.0, w + dw), max(1.0, h + dh)]
                wrong = rng.random() < 0.15
                dets.append(dict(image_id=image_id, bbox=box, score=float(rng.random()),
                                 category_id=int(rng.choice(CATEGORIES)) if wrong else category))
        for _ in range(int(rng.integers(0, 5))):  # background
            w, h = rng.uniform(4, 30, size=2)
            dets.append(dict(image_id=image_id, bbox=[float(rng.uniform(0, SIZE - w)), float(rng.uniform(0, SIZE - h)),
                                                      float(w), float(h)],
                             score=float(rng.random() * 0.6), category_id=int(rng.choice(CATEGORIES))))
    for i, g in enumerate(gts):
        g['id'] = i + 1
    if tie_scores:
        for d in dets:
            d['score'] = round(d['score'], 1)
    dataset = dict(images=[dict(id=i, width=SIZE, height=SIZE, file_name=f'{i}.jpg') for i in image_ids],
                   annotations=gts, categories=[dict(id=c, name=f'c{c}') for c in CATEGORIES])
    return dataset, dets


def as_segm(dets):
    """Mask detections: the box as an RLE mask (pycocotools takes its area and box from the mask)."""
    out = []
    for d in dets:
        x, y, w, h = d['bbox']
        mask = np.zeros((SIZE, SIZE), dtype=np.uint8, order='F')
        mask[int(y):int(np.ceil(y + h)), int(x):int(np.ceil(x + w))] = 1
        rle = mask_utils.encode(mask)
        rle['counts'] = rle['counts'].decode()
        out.append(dict(image_id=d['image_id'], category_id=d['category_id'], score=d['score'], segmentation=rle))
    return out


def evaluate(dataset, dets, iou_type, max_dets=None):
    """pycocotools' COCOeval after evaluate() and its stats[0] (accumulate + summarize on a copy)."""
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO()
        gt.dataset = copy.deepcopy(dataset)
        gt.createIndex()
        coco_eval = COCOeval(gt, gt.loadRes(copy.deepcopy(dets)), iou_type)
        if max_dets:
            coco_eval.params.maxDets = max_dets
        coco_eval.evaluate()
        coco_eval.accumulate()
        coco_eval.summarize()
    return coco_eval, coco_eval.stats[0]


def repeated(dataset, dets, counts):
    """The set in which image i (sorted ids) appears counts[i] times, each copy a new id, copies adjacent."""
    image_ids = sorted(image['id'] for image in dataset['images'])
    copies, new_id = {}, 0
    for image_id, count in zip(image_ids, counts):
        copies[image_id] = list(range(new_id + 1, new_id + 1 + int(count)))
        new_id += int(count)
    gts = [dict(g, image_id=c) for g in dataset['annotations'] for c in copies[g['image_id']]]
    for i, g in enumerate(gts):
        g['id'] = i + 1
    images = [dict(id=c, width=SIZE, height=SIZE, file_name=f'{c}.jpg') for i in image_ids for c in copies[i]]
    return (dict(dataset, images=images, annotations=gts),
            [dict(d, image_id=c) for d in dets for c in copies[d['image_id']]])


def resamples(n, how_many, seed):
    """Counts of draws with replacement (duplicates and absent images), plus a subset and a heavy repeat."""
    rng = np.random.default_rng(seed)
    draws = [np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(how_many)]
    subset = (rng.random(n) < 0.5).astype(int)
    heavy = np.ones(n, dtype=int)
    heavy[rng.integers(0, n)] = 5
    return draws + [subset, heavy]


@pytest.fixture(scope='module', params=['bbox', 'segm'])
def case(request):
    dataset, dets = synthetic_coco(seed=1)
    if request.param == 'segm':
        dets = as_segm(dets)
    coco_eval, stats0 = evaluate(dataset, dets, request.param)
    return request.param, dataset, dets, coco_eval, stats0


def test_the_synthetic_set_has_what_the_edge_cases_need(case):
    iou_type, dataset, dets, coco_eval, stats0 = case
    fields = coco_evidence(coco_eval)
    assert any(g['iscrowd'] for g in dataset['annotations'])
    assert (fields['gt_count'].sum(axis=1) == 0).any()  # an image without objects
    assert fields['gt_count'][:, CATEGORIES.index(7)].sum() == 0
    assert (fields['det_category'] == CATEGORIES.index(7)).any()
    ignored = np.unpackbits(fields['det_ignored'], axis=1, count=10, bitorder='little')
    assert ignored.any()  # detections matched to crowds: neither true nor false positives
    assert 0.1 < stats0 < 0.9


def test_the_full_set_gives_the_reported_ap(case):
    *_, coco_eval, stats0 = case
    fields = coco_evidence(coco_eval)
    assert fields['ids'].tolist() == sorted(coco_eval.params.imgIds)
    assert CocoAP(fields).value(np.ones(len(fields['ids']), dtype=int)) == pytest.approx(stats0 * 100, abs=1e-9)


def test_a_resampled_set_gives_what_pycocotools_gives_on_it(case):
    iou_type, dataset, dets, coco_eval, _ = case
    evidence = CocoAP(coco_evidence(coco_eval))
    for counts in resamples(len(evidence.ids), 3, seed=2):
        _, expected = evaluate(*repeated(dataset, dets, counts), iou_type)
        assert evidence.value(counts) == pytest.approx(expected * 100, abs=1e-9), counts


def test_values_is_value_of_each_row(monkeypatch):
    from vitbench.results import coco_ap
    dataset, dets = synthetic_coco(seed=3)
    evidence = CocoAP(coco_evidence(evaluate(dataset, dets, 'bbox')[0]))
    rng = np.random.default_rng(0)
    n = len(evidence.ids)
    counts = np.stack([np.bincount(rng.integers(0, n, size=n), minlength=n) for _ in range(40)])
    counts[0] = 0
    counts[0, 3] = 2  # only the image without objects: no category has ground truth, pycocotools' -1
    values = evidence.values(counts)
    assert values.shape == (40,) and values[0] == -100.0
    assert values == pytest.approx([evidence.value(row) for row in counts], abs=1e-12)
    assert len(set(np.round(values[1:], 6))) > 30  # resamples differ: the counts are used
    monkeypatch.setattr(coco_ap, '_ROWS', 7)  # blocks of resamples, and steps within a category, of any size
    monkeypatch.setattr(coco_ap, '_CHUNK_ELEMENTS', 1)
    assert evidence.values(counts) == pytest.approx(values, abs=1e-12)


def test_tied_scores_rank_in_image_order():
    """With many exactly tied scores the run's own AP and any subset's are still exact, and so is a resample
    with duplicates when no two detections of one category in one image tie: ties rank in image order, as
    accumulate's stable sort ranks them."""
    dataset, dets = synthetic_coco(seed=4, tie_scores=True)
    coco_eval, stats0 = evaluate(dataset, dets, 'bbox')
    evidence = CocoAP(coco_evidence(coco_eval))
    n = len(evidence.ids)
    assert evidence.value(np.ones(n, dtype=int)) == pytest.approx(stats0 * 100, abs=1e-9)
    subset = (np.random.default_rng(5).random(n) < 0.6).astype(int)
    _, expected = evaluate(*repeated(dataset, dets, subset), 'bbox')
    assert evidence.value(subset) == pytest.approx(expected * 100, abs=1e-9)

    rng = np.random.default_rng(6)
    grid = np.round(np.arange(1, 20) * 0.05, 2)  # 19 scores shared by all images, distinct within a group
    for key in {(d['image_id'], d['category_id']) for d in dets}:
        group = [d for d in dets if (d['image_id'], d['category_id']) == key]
        for d, score in zip(group, rng.choice(grid, size=len(group), replace=False)):
            d['score'] = float(score)
    evidence = CocoAP(coco_evidence(evaluate(dataset, dets, 'bbox')[0]))
    for counts in resamples(n, 2, seed=7):
        _, expected = evaluate(*repeated(dataset, dets, counts), 'bbox')
        assert evidence.value(counts) == pytest.approx(expected * 100, abs=1e-9), counts


def test_more_than_max_det_detections_keep_the_first_hundred():
    """An image with more detections of a category than 100 with mmdet's maxDets (100, 300, 1000): evaluateImg
    keeps 1000, AP reads the 100 best."""
    dataset, dets = synthetic_coco(seed=6)
    max_dets = [100, 300, 1000]
    rng = np.random.default_rng(0)
    image_id = dataset['images'][0]['id']
    dets = dets + [dict(image_id=image_id, category_id=1, score=float(rng.random()),
                        bbox=[float(v) for v in rng.uniform(0, 30, size=4) + [0, 0, 2, 2]]) for _ in range(150)]
    coco_eval, stats0 = evaluate(dataset, dets, 'bbox', max_dets)
    assert max(len(e['dtIds']) for e in coco_eval.evalImgs if e) > 100
    fields = coco_evidence(coco_eval)
    assert np.bincount(fields['det_image'] * len(CATEGORIES) + fields['det_category']).max() == 100
    evidence = CocoAP(fields)
    assert evidence.value(np.ones(len(evidence.ids), dtype=int)) == pytest.approx(stats0 * 100, abs=1e-9)
    counts = np.ones(len(evidence.ids), dtype=int)
    counts[0] = 2
    _, expected = evaluate(*repeated(dataset, dets, counts), 'bbox', max_dets)
    assert evidence.value(counts) == pytest.approx(expected * 100, abs=1e-9)


def test_evidence_round_trips_through_per_image_npz(case, tmp_path):
    *_, coco_eval, stats0 = case
    fields = coco_evidence(coco_eval)
    assert all(v.dtype != object for v in fields.values())
    ids = fields.pop('ids')
    per_image.publish('bbox_mAP', 'coco_ap', ids, **fields)
    path = per_image.write(str(tmp_path), per_image.take_published())
    evidence = per_image.read(path)['bbox_mAP']
    assert isinstance(evidence, CocoAP) and evidence.ids.tolist() == ids.tolist()
    assert evidence.value(np.ones(len(ids), dtype=int)) == pytest.approx(stats0 * 100, abs=1e-9)
    counts = resamples(len(ids), 1, seed=7)[0]
    assert evidence.value(counts) == pytest.approx(CocoAP(dict(fields, ids=ids)).value(counts), abs=1e-12)


def test_vitbench_coco_metric_publishes_what_it_reports(tmp_path):
    """The mmdet-scope metric: mmdet's numbers unchanged, and evidence for box and mask AP whose full set gives
    them."""
    pytest.importorskip('mmdet')
    import json

    import torch
    from mmdet.registry import METRICS
    from mmengine.registry import init_default_scope

    import downstream  # noqa: F401
    dataset, dets = synthetic_coco(seed=8)
    ann_file = tmp_path / 'instances.json'
    ann_file.write_text(json.dumps(dataset))
    init_default_scope('mmdet')
    ours, theirs = (METRICS.build(dict(type=name, ann_file=str(ann_file), metric=['bbox', 'segm']))
                    for name in ('vitbench.CocoMetric', 'CocoMetric'))
    assert type(ours).__name__ == type(theirs).__name__ == 'CocoMetric' and type(ours) is not type(theirs)
    for metric in (ours, theirs):
        metric.dataset_meta = dict(classes=tuple(f'c{c}' for c in CATEGORIES))
    for image in dataset['images']:
        mine = [d for d in dets if d['image_id'] == image['id']]
        boxes = [[x, y, x + w, y + h] for x, y, w, h in (d['bbox'] for d in mine)]
        masks = [mask_utils.decode(m['segmentation']).astype(bool) for m in as_segm(mine)]
        sample = dict(img_id=image['id'], ori_shape=(SIZE, SIZE), pred_instances=dict(
            bboxes=torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
            scores=torch.tensor([d['score'] for d in mine], dtype=torch.float32),
            labels=torch.tensor([CATEGORIES.index(d['category_id']) for d in mine], dtype=torch.long),
            masks=torch.from_numpy(np.array(masks, dtype=bool).reshape(-1, SIZE, SIZE))))
        for metric in (ours, theirs):
            metric.process({}, [sample])
    per_image.take_published()
    results = ours.evaluate(len(dataset['images']))
    published = per_image.take_published()
    assert results == theirs.evaluate(len(dataset['images']))  # mmdet's numbers, unchanged
    assert sorted(published) == ['bbox_mAP', 'segm_mAP']
    for name in ('bbox_mAP', 'segm_mAP'):
        fields = published[name]
        assert str(fields['kind']) == 'coco_ap'
        assert fields['ids'].tolist() == sorted(image['id'] for image in dataset['images'])
        value = CocoAP(fields).value(np.ones(len(fields['ids']), dtype=int))
        assert 0 < results[f'coco/{name}'] < 1
        assert value / 100 == pytest.approx(results[f'coco/{name}'], abs=5e-4 + 1e-12)  # mmdet rounds to 3 places
    assert ours.outfile_prefix is None  # the temporary prefix does not outlive the evaluation
