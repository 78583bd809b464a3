"""Intervals from one run: the per-image evidence recomputes each metric as its toolbox does (mmseg's IoUMetric
on a resampled set, hand-computed accuracy), the percentile bootstrap matches the binomial interval it should,
pairing by image finds a difference that two overlapping intervals hide, and the cross-task rank orders rows
with the probabilities the resampling gives. COCO AP's evidence is tested against pycocotools in test_coco_ap.py."""
import csv
import io
import json
import math

import numpy as np
import pytest
import torch

from downstream.seg.metrics import PerClassIoUMetric
from vitbench.results import bootstrap, per_image
from vitbench.results.baseline import paired_deltas
from vitbench.results.rank import column_key, cross_task_rank
from vitbench.results.render import render
from vitbench.results.table import LeaderboardError, build_table


def accuracy(correct, ids=None) -> per_image.Accuracy:
    correct = np.asarray(correct, dtype=bool)
    ids = np.array([f'c/{i}.jpg' for i in range(len(correct))]) if ids is None else np.asarray(ids)
    return per_image.Accuracy(dict(ids=ids, correct=correct))


def test_accuracy_of_a_resample_counts_each_drawn_copy():
    evidence = accuracy([1, 1, 0, 1])
    assert evidence.value(np.ones(4)) == 75.0
    assert evidence.value(np.array([2, 0, 1, 1])) == pytest.approx(100 * 3 / 4)  # 1, 1, 0, 1
    assert evidence.values(np.array([[0, 0, 1, 1], [4, 0, 0, 0]])).tolist() == [50.0, 100.0]


def seg_samples(seed: int, images: int = 6, classes: int = 5):
    """Random label maps with an ignored region (255), and predictions right on about half of the pixels."""
    g = torch.Generator().manual_seed(seed)
    samples = []
    for i in range(images):
        label = torch.randint(0, classes, (12, 16), generator=g)
        label[:2] = 255
        pred = torch.where(torch.rand(12, 16, generator=g) < 0.5, label.clamp(max=classes - 1),
                           torch.randint(0, classes, (12, 16), generator=g))
        samples.append(dict(pred_sem_seg=dict(data=pred[None]), gt_sem_seg=dict(data=label[None]),
                            img_path=f'/data/ade/images/validation/img_{i}.jpg'))
    return samples


def miou_of(samples, classes: int = 5) -> float:
    """mmseg's IoUMetric (through vitbench's subclass) on these samples."""
    metric = PerClassIoUMetric(iou_metrics=['mIoU'])
    metric.dataset_meta = dict(classes=[f'c{k}' for k in range(classes)])
    metric.process({}, samples)
    return metric.compute_metrics(metric.results)['mIoU']


def test_miou_evidence_recomputes_mmseg_on_the_full_set_and_on_a_resample():
    samples = seg_samples(0)
    per_image.take_published()
    reported = miou_of(samples)
    evidence = per_image.MeanIoU(per_image.take_published()['mIoU'])
    assert evidence.ids.tolist() == [f'validation/img_{i}.jpg' for i in range(6)]
    assert evidence.value(np.ones(6)) == pytest.approx(reported, abs=0.005)  # mmseg rounds to 0.01
    draw = np.array([0, 0, 2, 3, 3, 3])  # images 1, 4, 5 left out, 0 twice, 3 three times
    assert evidence.value(np.bincount(draw, minlength=6)) == pytest.approx(
        miou_of([samples[i] for i in draw]), abs=0.005)
    assert evidence.value(np.bincount(draw, minlength=6)) != pytest.approx(reported, abs=0.05)  # it does differ


def test_evidence_round_trips_through_per_image_npz(tmp_path):
    written = dict(kind=np.array('accuracy'), ids=np.array(['a/1.jpg', 'a/2.jpg']), correct=np.array([True, False]))
    per_image.write(str(tmp_path), dict(top1=written))
    assert per_image.metrics_in(str(tmp_path)) == ['top1']
    read = per_image.read(str(tmp_path / per_image.FILE))['top1']
    assert read.ids.tolist() == ['a/1.jpg', 'a/2.jpg'] and read.value(np.ones(2)) == 50.0
    per_image.write(str(tmp_path), dict(mIoU=dict(kind=np.array('iou'), ids=np.array(['x']))))
    with pytest.raises(per_image.EvidenceError, match="'mIoU/intersect' is missing"):
        per_image.read(str(tmp_path / per_image.FILE))
    assert per_image.metrics_in(str(tmp_path)) == ['mIoU']  # one evaluation's evidence replaces the last one's


def test_the_percentile_interval_of_an_accuracy_is_the_binomial_one():
    rng = np.random.default_rng(1)
    n, p = 4000, 0.7
    evidence = accuracy(rng.random(n) < p)
    values, images = bootstrap.resampled([[evidence]])
    low, high = bootstrap.percentile_interval(values[0])
    mean = evidence.value(np.ones(n))
    half = 1.96 * 100 * math.sqrt(mean / 100 * (1 - mean / 100) / n)  # the normal approximation, 1.4 points
    assert images == n and values.shape == (1, bootstrap.RESAMPLES)
    assert low == pytest.approx(mean - half, abs=0.15) and high == pytest.approx(mean + half, abs=0.15)
    again, _ = bootstrap.resampled([[evidence]])
    assert np.array_equal(values, again)  # seeded: the same interval every time the board is made


def write_run(folder, recipe: str, correct, seed=0, metric_value=None, dataset='cifar10', backbone='vit_tiny'):
    folder.mkdir(parents=True)
    correct = np.asarray(correct, dtype=bool)
    per_image.write(str(folder), dict(top1=dict(kind=np.array('accuracy'), correct=correct,
                                                ids=np.array([f'c/{i}.png' for i in range(len(correct))]))))
    value = 100 * correct.mean() if metric_value is None else metric_value
    (folder / 'result.json').write_text(json.dumps(dict(
        task='transfer', dataset=dataset, backbone=backbone, pretrain=dict(recipe=recipe, epochs=1),
        metrics=dict(top1=value), seed=seed, per_image=['top1'])))


def test_pairing_by_image_finds_a_difference_that_overlapping_intervals_hide(tmp_path):
    rng = np.random.default_rng(2)
    base = rng.random(1000) < 0.8
    better = base.copy()
    better[np.flatnonzero(~base)[:25]] = True  # right on 25 more images, the same elsewhere: +2.5 points
    write_run(tmp_path / 'base', 'scratch', base)
    write_run(tmp_path / 'better', 'mae', better)
    table = build_table([str(tmp_path)])
    rows = {r.recipe: r for r in table.rows}
    column = table.columns[0]
    a, b = rows['mae'].stats[column], rows['scratch'].stats[column]
    assert a.interval == b.interval == 'images' and a.ci95_low < b.ci95_high  # the two intervals overlap
    delta = paired_deltas(table, 'scratch').of(0, column)
    assert delta.mean == pytest.approx(2.5) and delta.interval == 'images' and delta.excludes_zero
    assert delta.ci95_low > 0.9  # 25 of 1000 images, all one way: the paired interval is tight
    md = render('md', table, [], baseline='scratch')
    assert '+2.5 [' in md and '(n=1, by image) *' in md and f'{a.mean:.1f} [{a.ci95_low:.1f}, {a.ci95_high:.1f}]' in md


def test_a_cell_of_several_seeds_keeps_its_t_interval_and_the_rank_resamples_its_seeds(tmp_path):
    rng = np.random.default_rng(3)
    for seed, p in enumerate((0.6, 0.7, 0.8)):
        write_run(tmp_path / 'a' / f's{seed}', 'mae', rng.random(400) < p, seed=seed)
    write_run(tmp_path / 'b', 'scratch', rng.random(400) < 0.5)
    table = build_table([str(tmp_path)])
    rows = {r.recipe: r for r in table.rows}
    column = table.columns[0]
    summary = rows['mae'].stats[column]
    # 3 seeds: Student's t over them; a percentile bootstrap of the 3 seeds (and their images) is far narrower
    assert summary.n == 3 and summary.interval == 'seeds' and summary.ci95_high - summary.ci95_low > 40
    low, high = bootstrap.percentile_interval(bootstrap.resampled([rows['mae'].evidence[column]])[0][0])
    assert high - low < 0.4 * (summary.ci95_high - summary.ci95_low)  # 18 points against 49
    assert len(rows['mae'].evidence[column]) == 3 and rows['scratch'].stats[column].interval == 'images'
    assert paired_deltas(table, 'scratch').of(0, column).interval == ''  # no shared seed and not one run each
    assert cross_task_rank(table).resampled == 'seeds+images'


def test_evidence_of_another_run_is_named_and_not_used(tmp_path):
    write_run(tmp_path / 'run', 'mae', [True, False, True, True], metric_value=50.0)  # the evidence says 75
    table = build_table([str(tmp_path)])
    summary = table.rows[0].stats[table.columns[0]]
    assert summary.ci95_low is None and summary.mean == 50.0
    assert len(table.warnings) == 1 and "'top1' evidence gives 75.00" in table.warnings[0]
    assert 'per_image.npz' in table.warnings[0] and not table.rejected


def test_a_malformed_per_image_list_is_named(tmp_path):
    write_run(tmp_path / 'run', 'mae', [True, False])
    record = json.loads((tmp_path / 'run' / 'result.json').read_text())
    (tmp_path / 'run' / 'result.json').write_text(json.dumps(dict(record, per_image='top1')))
    table = build_table([str(tmp_path)])
    assert not table.rows and "key 'per_image' is 'top1', expected a list of metric names" in table.rejected[0]


def three_rows(tmp_path, n: int = 2000):
    """Three backbones on two transfer sets: 'strong' clearly first, 'weak' and 'twin' identical (a tie)."""
    rng = np.random.default_rng(4)
    for dataset in ('cifar10', 'flowers102'):
        noise = rng.random(n)
        for backbone, p in (('strong', 0.9), ('weak', 0.6), ('twin', 0.6)):
            write_run(tmp_path / dataset / backbone, 'supervised', noise < p, dataset=dataset, backbone=backbone)
    return build_table([str(tmp_path)])


def test_cross_task_rank_with_rank_probabilities_and_ties(tmp_path):
    table = three_rows(tmp_path)
    ranking = cross_task_rank(table)
    assert [column_key(c) for c in ranking.columns] == ['cifar10', 'flowers102'] and ranking.resampled == 'images'
    first, *others = ranking.ranked
    assert first.row.backbone == 'strong' and first.rank == 1 and first.rank_probability[0] == 1.0
    # z of (0.9, 0.6, 0.6) over the rows: (2/sqrt(3), -1/sqrt(3), -1/sqrt(3)), the same on both columns
    assert first.mean_z == pytest.approx(2 / math.sqrt(3))
    assert {r.row.backbone for r in others} == {'weak', 'twin'}
    assert all(not r.tied_with_best and r.rank_probability[0] == 0.0 for r in others)
    # identical evidence: each is second in the same resamples as it is third, never apart
    assert all(r.rank_probability[1] + r.rank_probability[2] == pytest.approx(1.0) for r in others)
    md = render('md', table, [])
    assert '## Cross-task rank' in md and 'P(rank 3)' in md and 'Columns: CIFAR-10 top-1 (cifar10)' in md


def test_the_csv_carries_the_rank_columns(tmp_path):
    three_rows(tmp_path)
    write_run(tmp_path / 'cifar10' / 'lonely', 'supervised', [True, False], backbone='lonely')
    table = build_table([str(tmp_path)])
    ranking = cross_task_rank(table, ['cifar10', 'flowers102'])
    rows = {r['backbone']: r for r in csv.DictReader(io.StringIO(render('csv', table, [],
                                                                        aggregate=['cifar10', 'flowers102'])))}
    for ranked in ranking.ranked:
        row = rows[ranked.row.backbone]
        assert int(row['rank']) == ranked.rank and row['rank over'] == 'cifar10 flowers102'
        assert float(row['rank mean_z']) == pytest.approx(ranked.mean_z, abs=1e-4)
        assert [float(row[f'P(rank {k})']) for k in (1, 2, 3)] == pytest.approx(ranked.rank_probability, abs=1e-4)
        assert row['rank tied_with_best'] == ('yes' if ranked.tied_with_best else 'no')
    assert rows['strong']['rank'] == '1' and rows['lonely']['rank'] == ''
    assert rows['lonely']['rank over'] == 'not ranked: no flowers102'


def test_a_row_missing_a_chosen_column_is_listed_not_ranked(tmp_path):
    three_rows(tmp_path)
    write_run(tmp_path / 'cifar10' / 'lonely', 'supervised', [True, False], backbone='lonely')
    table = build_table([str(tmp_path)])
    default = cross_task_rank(table)
    assert [column_key(c) for c in default.columns] == ['cifar10'] and [c.dataset for c in default.dropped] == [
        'flowers102']  # the default: the downstream columns every row has
    picked = cross_task_rank(table, ['cifar10', 'flowers102'])
    assert [r.row.backbone for r in picked.ranked if r.row.backbone == 'lonely'] == []
    assert [(row.backbone, [c.dataset for c in lacks]) for row, lacks in picked.missing] == [('lonely', ['flowers102'])]
    assert 'Not ranked: lonely / supervised / 1: no Flowers-102 top-1.' in render('md', table, [], aggregate=[
        'cifar10', 'flowers102'])
    with pytest.raises(LeaderboardError,
                       match="--aggregate: no column 'ade20k'.*expected some of: cifar10, flowers102"):
        cross_task_rank(table, ['ade20k'])


def test_errors_rank_lowest_first_and_are_no_percentages(tmp_path):
    """mCE and ECE: the lowest is the best (bold), the rank turns their sign; mCE may exceed 100 (AlexNet's is
    100 by definition)."""
    for recipe, mce, ece in (('a', 60.0, 3.0), ('b', 120.0, 9.0), ('c', 70.0, 5.0)):
        (tmp_path / recipe).mkdir()
        (tmp_path / recipe / 'result.json').write_text(json.dumps(dict(
            task='finetune', dataset='imagenet', backbone='vit_tiny', pretrain=dict(recipe=recipe, epochs=1),
            metrics=dict(top1=70.0, mCE=mce, ece=ece))))
    table = build_table([str(tmp_path)])
    assert not table.rejected
    assert {c.label: table.best(c) for c in table.columns} == {'ImageNet top-1': 70.0, 'ImageNet mCE': 60.0,
                                                               'ImageNet ECE': 3.0}
    ranking = cross_task_rank(table, ['imagenet_mce', 'imagenet_ece'])
    assert [r.row.recipe for r in ranking.ranked] == ['a', 'c', 'b'] and ranking.resampled == ''


def test_ece_evidence_recomputes_the_metric_on_a_resample():
    from pretrain.robustness_metrics import CalibrationError, expected_calibration_error
    g = torch.Generator().manual_seed(5)
    scores = torch.rand(40, 6, generator=g).softmax(-1) ** 0.5
    labels = torch.randint(0, 6, (40,), generator=g)
    metric = CalibrationError()
    batch = dict(data_samples=dict(gt_label=labels, img_path=[f'/v/c/{i}.JPEG' for i in range(40)]))
    metric.process(batch, [dict(pred_score=s, gt_label=y) for s, y in zip(scores, labels)])
    per_image.take_published()
    reported = metric.compute_metrics(metric.results)['ece']
    evidence = per_image.Calibration(per_image.take_published()['ece'])
    assert evidence.value(np.ones(40)) == pytest.approx(reported, abs=1e-9)
    draw = np.random.default_rng(0).integers(0, 40, 40)
    confidence, top1 = scores.max(-1)
    assert evidence.value(np.bincount(draw, minlength=40)) == pytest.approx(expected_calibration_error(
        confidence[draw], (top1 == labels)[draw]), abs=1e-9)


def test_mce_evidence_recomputes_imagenet_c_on_a_resample_of_its_clean_images():
    """Each clean image's copies under every corruption and severity are drawn together."""
    from pretrain.robustness import ALL_CORRUPTIONS
    from pretrain.robustness_metrics import CorruptionError
    rng = np.random.default_rng(6)
    corruptions = [ALL_CORRUPTIONS.index(c) for c in ('gaussian_noise', 'contrast')]
    images = [f'n0{i}/x{i}.JPEG' for i in range(12)]

    def scored(of_images):
        return [(c, s, bool(rng_right[c, s, i]), images[i]) for c in corruptions for s in range(1, 6)
                for i in of_images]

    rng_right = {(c, s, i): rng.random() < 0.5 for c in corruptions for s in range(1, 6) for i in range(12)}
    metric = CorruptionError()
    per_image.take_published()
    reported = metric.compute_metrics(scored(range(12)))
    evidence = per_image.GroupedError(per_image.take_published()['mCE_partial'])
    assert evidence.value(np.ones(12)) == pytest.approx(reported['mCE_partial'], abs=1e-9)
    draw = [0, 0, 3, 5, 5, 5, 7, 8, 9, 9, 11, 11]
    resampled = metric.compute_metrics(scored([images.index(images[i]) for i in draw]))['mCE_partial']
    order = {name: k for k, name in enumerate(evidence.ids.tolist())}
    counts = np.bincount([order[images[i]] for i in draw], minlength=12)
    assert evidence.value(counts) == pytest.approx(resampled, abs=1e-9) and resampled != pytest.approx(
        reported['mCE_partial'], abs=0.1)
