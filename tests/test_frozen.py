"""Frozen-feature evaluation (downstream/frozen): the weighted k-NN and the retrieval mAP against hand-computed
cases and, where scikit-learn is installed, against KNeighborsClassifier and average_precision_score; the linear
probe; the per-image evidence of mAP; the feature cache; one demo-scale run through tools/test.py onto the board."""
import json
import math
import os.path as osp

import numpy as np
import pytest
import torch

from downstream.frozen.knn import knn_predict, knn_scores
from downstream.frozen.linear_probe import train_linear_probe
from downstream.frozen.retrieval import average_precisions
from vitbench.results import per_image


def _clusters(seed, n, classes=5, dim=16, spread=0.8):
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, dim, generator=g)
    labels = torch.arange(n) % classes
    return centres[labels] + spread * torch.randn(n, dim, generator=g), labels


def test_knn_hand_computed_case():
    # query along x; neighbours at cos 1 (class 0), cos 0.6 (class 1) and 0.8 (class 1), cos -1 (class 0)
    train = torch.tensor([[2.0, 0.0], [0.6, 0.8], [0.8, 0.6], [-1.0, 0.0]])
    labels = torch.tensor([0, 1, 1, 0])
    query = torch.tensor([[1.0, 0.0]])
    scores = knn_scores(train, labels, query, k=3, temperature=0.5, num_classes=2)
    assert scores[0, 0].item() == pytest.approx(math.exp(1 / 0.5))  # the 4th (cos -1) is not among the 3
    assert scores[0, 1].item() == pytest.approx(math.exp(0.6 / 0.5) + math.exp(0.8 / 0.5))
    # two neighbours at cos 0.6 and 0.8 outvote one at cos 1 when T = 0.5 (e^1.2 + e^1.6 = 8.27 > e^2 = 7.39)...
    assert knn_predict(train, labels, query, k=3, temperature=0.5).item() == 1
    # ...not when T = 0.1 (e^6 + e^8 < e^10): the temperature decides how much the nearest counts
    assert knn_predict(train, labels, query, k=3, temperature=0.1).item() == 0


def test_knn_matches_scikit_learn():
    neighbors = pytest.importorskip('sklearn.neighbors')
    train, train_labels = _clusters(0, 300)
    test, _ = _clusters(1, 80)
    T = 0.07
    reference = neighbors.KNeighborsClassifier(
        n_neighbors=20, metric='cosine', algorithm='brute',
        weights=lambda distance: np.exp((1.0 - distance) / T))  # cosine distance = 1 - cos
    reference.fit(train.numpy().astype(np.float64), train_labels.numpy())
    expected = reference.predict(test.numpy().astype(np.float64))
    assert (knn_predict(train, train_labels, test, k=20, temperature=T).numpy() == expected).all()


def _ap_by_hand(scores, relevant):
    order = np.argsort(-scores, kind='stable')
    hits = relevant[order]
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float((precision * hits).sum() / hits.sum())


def test_average_precision_hand_computed_case():
    # ranked: relevant, not, relevant -> AP = (1/1 + 2/3) / 2
    collection = torch.tensor([[1.0, 0.0], [0.9, 0.3], [0.5, 0.7], [-1.0, 0.1]])
    labels = torch.tensor([1, 0, 1, 0])
    ap = average_precisions(collection, labels, torch.tensor([[1.0, 0.0]]), torch.tensor([1]))
    assert ap.item() == pytest.approx((1 + 2 / 3) / 2)


@pytest.mark.parametrize('leave_one_out', [False, True])
def test_average_precision_matches_scikit_learn(leave_one_out):
    collection, labels = _clusters(2, 120, spread=1.5)
    queries, query_labels = (collection, labels) if leave_one_out else _clusters(3, 40, spread=1.5)
    aps = average_precisions(collection, labels, queries, query_labels, query_is_collection=leave_one_out).numpy()
    cos = torch.nn.functional.normalize(queries, dim=1) @ torch.nn.functional.normalize(collection, dim=1).T
    try:
        from sklearn.metrics import average_precision_score
    except ImportError:
        average_precision_score = None
    for q in range(len(queries)):
        keep = np.arange(len(collection)) != q if leave_one_out else np.ones(len(collection), bool)
        relevant = (labels.numpy() == query_labels[q].item())[keep]
        scores = cos[q].double().numpy()[keep]
        expected = (average_precision_score(relevant, scores) if average_precision_score else
                    _ap_by_hand(scores, relevant))
        assert aps[q] == pytest.approx(expected, abs=1e-9)


def test_mean_evidence_recomputes_the_map(tmp_path):
    per_image.take_published()
    per_image.publish('retrieval_map', 'mean', ['a', 'b', 'c'], value=[10.0, 40.0, 70.0])
    path = per_image.write(str(tmp_path), per_image.take_published())
    evidence = per_image.read(path)['retrieval_map']
    assert evidence.value(np.ones(3)) == pytest.approx(40.0)
    assert evidence.value(np.array([2, 0, 1])) == pytest.approx(30.0)  # a resample: a twice, b never


def test_linear_probe_separates_clusters():
    features, labels = _clusters(4, 200, spread=0.3)
    probe = train_linear_probe(features, labels, 5, epochs=10, batch_size=100, base_lr=1.0)
    with torch.no_grad():
        assert (probe(features).argmax(1) == labels).float().mean() == 1.0
    with pytest.raises(ValueError, match='k must be'):
        knn_scores(features, labels, features, k=0)


def test_frozen_demo_run_reaches_the_board(tmp_path, monkeypatch):
    """tools/test.py on the tiny demo CIFAR-100 (2 / 1 images per class): result.json, per_image.npz, the features
    cached (a second run reads them) and the three columns on the leaderboard, with intervals."""
    from harness import demo_data
    from harness.demo_data.build import generate
    from tools import leaderboard, test as test_tool
    from backbones import create_model

    data = tmp_path / 'data'
    assert not generate([demo_data.DATASETS['cifar100']], str(data), scale='tiny', log=lambda *a: None)
    ckpt = tmp_path / 'backbone.pth'
    torch.manual_seed(0)
    torch.save(create_model('vit_demo_patch8_64', num_classes=0, img_size=32, global_pool='avg').state_dict(), ckpt)
    work = tmp_path / 'run'
    config = osp.join(osp.dirname(osp.dirname(osp.abspath(__file__))), 'configs/demo/frozen_cifar100_demo.py')
    options = ['--work-dir', str(work), '--cfg-options',
               f'test_dataloader.dataset.data_root={data}/cifar100',
               f'test_cfg.memory_dataloader.dataset.data_root={data}/cifar100',
               'test_evaluator.linear_probe.epochs=5']
    test_tool.main([config, str(ckpt)] + options)
    own = work / 'eval' / 'backbone'  # tools/test.py's own record of the checkpoint it scored (docs/reliability.md)
    record = json.loads((own / 'result.json').read_text())
    assert record['task'] == 'frozen' and set(record['per_image']) == {'knn_top1', 'retrieval_map', 'linear_top1'}
    cached = sorted(p.name for p in (own / 'features').iterdir())
    assert len(cached) == 2  # the training collection and the test set
    before = {p: p.stat().st_mtime_ns for p in (own / 'features').iterdir()}
    test_tool.main([config, str(ckpt)] + options)
    assert {p: p.stat().st_mtime_ns for p in (own / 'features').iterdir()} == before  # read, not recomputed
    assert json.loads((own / 'result.json').read_text())['metrics'] == record['metrics']
    out = tmp_path / 'board.md'
    leaderboard.main([str(work), '--out', str(out)])
    board = out.read_text()
    assert 'CIFAR-100 k-NN top-1' in board and 'CIFAR-100 retrieval mAP' in board and ' [' in board


@pytest.mark.slow
def test_frozen_on_two_processes_equals_one(tmp_path):
    """torchrun with 2 CPU processes: each computes the features of its half of the images, and the k-NN memory,
    the retrieval database and the probe's data are gathered whole, in order (they were each process's half, and
    both wrote one cache file). The metrics and the per-image evidence equal the one-process run's."""
    import sys
    from pathlib import Path

    from _tool_helpers import run_tool
    from backbones import create_model
    from harness import demo_data
    from harness.demo_data.build import generate

    data = tmp_path / 'data'
    assert not generate([demo_data.DATASETS['cifar100']], str(data), scale='tiny', log=lambda *a: None)
    ckpt = tmp_path / 'backbone.pth'
    torch.manual_seed(0)
    torch.save(create_model('vit_demo_patch8_64', num_classes=0, img_size=32, global_pool='avg').state_dict(), ckpt)
    options = ['--cfg-options', f'test_dataloader.dataset.data_root={data}/cifar100',
               f'test_cfg.memory_dataloader.dataset.data_root={data}/cifar100',
               'test_dataloader.batch_size=64', 'test_cfg.memory_dataloader.batch_size=64',
               'test_evaluator.linear_probe.epochs=2']
    torchrun = [str(Path(sys.executable).with_name('torchrun')), '--standalone', '--nproc_per_node', '2']
    outcomes = {}
    for name, launcher, extra in (('one', None, []), ('two', torchrun, ['--launcher', 'pytorch'])):
        result = run_tool('tools/test.py', 'configs/demo/frozen_cifar100_demo.py', ckpt, '--work-dir',
                          tmp_path / name, *extra, *options, launcher=launcher, timeout=600)
        assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]
        own = tmp_path / name / 'eval' / 'backbone'
        cached = {p.name: np.load(p) for p in (own / 'features').iterdir()}
        outcomes[name] = json.loads((own / 'result.json').read_text())['metrics'], cached
    (metrics_one, cache_one), (metrics_two, cache_two) = outcomes['one'], outcomes['two']
    assert sorted(cache_one) == sorted(cache_two) and len(cache_one) == 2  # same weights and data: same keys
    for name in cache_one:
        assert list(cache_two[name]['ids']) == list(cache_one[name]['ids'])
        np.testing.assert_array_equal(cache_two[name]['labels'], cache_one[name]['labels'])
        np.testing.assert_allclose(cache_two[name]['features'], cache_one[name]['features'], atol=1e-5)
    assert metrics_two.keys() == metrics_one.keys()
    for key, value in metrics_one.items():
        assert metrics_two[key] == pytest.approx(value, abs=1e-3), key
