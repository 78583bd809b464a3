"""Per-image predictions and the pairwise disagreement of thesis Table 3.4: the metric stores each image's top-1 /
top-5 classes and label in per_image.npz, and tools/analyze.py disagreement counts, for every pair of runs, the
fraction of images whose top-1 differ, checked against a hand-computed case."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from pretrain.metrics import Accuracy, ReaLAccuracy
from vitbench.results import per_image
from vitbench.results.disagreement import disagreement_matrix

REPO = Path(__file__).resolve().parents[1]
IDS = ['c/a.JPEG', 'c/b.JPEG', 'c/c.JPEG', 'c/d.JPEG', 'c/e.JPEG']
LABELS = [0, 1, 1, 3, 4]


def _main():
    spec = importlib.util.spec_from_file_location('analyze_tool', REPO / 'tools' / 'analyze.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda *args: module.main([str(a) for a in args])


def _run(folder: Path, pred, order=range(5), with_pred=True) -> Path:
    folder.mkdir()
    order = list(order)
    fields = dict(kind=np.array('accuracy'), ids=np.array([IDS[i] for i in order]),
                  correct=np.array([pred[i] == LABELS[i] for i in order]))
    if with_pred:
        fields.update(pred=np.array([pred[i] for i in order]), label=np.array([LABELS[i] for i in order]))
    per_image.write(str(folder), dict(top1=fields))
    return folder


def test_accuracy_metric_stores_each_images_classes_and_label():
    metric = Accuracy(topk=(1, 5))
    scores = torch.eye(6)[[2, 0]] + torch.linspace(0, 0.5, 6)  # image 0: 2, 5, 4, 3, 1; image 1: 0, 5, 4, 3, 2
    metric.process(dict(data_samples=dict(img_path=['x/0.JPEG', 'x/1.JPEG'])),
                   [dict(pred_score=scores[0], gt_label=torch.tensor(2)),
                    dict(pred_score=scores[1], gt_label=torch.tensor(3))])
    per_image.take_published()
    assert metric.compute_metrics(metric.results) == dict(top1=50.0, top5=100.0)
    top1 = per_image.take_published()['top1']
    assert top1['pred'].tolist() == [2, 0] and top1['label'].tolist() == [2, 3]
    assert top1['topk'].tolist() == [[2, 5, 4, 3, 1], [0, 5, 4, 3, 2]]
    assert top1['correct'].tolist() == [True, False]
    real = ReaLAccuracy()
    real.process(dict(data_samples={'img_path': ['x/0.JPEG'], 'real_labels': [[0, 0, 1]]}),
                 [dict(pred_score=scores[0])])
    real.compute_metrics(real.results)
    assert per_image.take_published()['top1_real']['pred'].tolist() == [2]


def test_disagreement_of_runs_is_the_hand_computed_fraction(tmp_path):
    a = _run(tmp_path / 'a', [0, 1, 2, 3, 4])
    b = _run(tmp_path / 'b', [0, 1, 2, 0, 0], order=[4, 2, 0, 3, 1])  # another evaluation order: paired by id
    result = disagreement_matrix(dict(convnet=str(a), deit=str(b)))
    assert result['models'] == ['groundtruth', 'convnet', 'deit']
    pairs = {k: v['disagreement'] for k, v in result['pairs'].items()}
    # a vs labels: image c (2 vs 1); b vs labels: c, d, e; a vs b: d, e
    assert pairs == {'groundtruth|convnet': 0.2, 'groundtruth|deit': 0.6, 'convnet|deit': 0.4}
    assert all(v['images'] == 5 for v in result['pairs'].values())


def test_analyze_disagreement_writes_the_matrix_and_refuses_files_without_predictions(tmp_path, capsys):
    main = _main()
    a = _run(tmp_path / 'a', [0, 1, 2, 3, 4])
    b = _run(tmp_path / 'b', [0, 1, 2, 0, 0])
    assert main('disagreement', '--runs', f'convnet={a}', f'deit={b}/per_image.npz', '--out', tmp_path / 'out') == 0
    written = json.loads((tmp_path / 'out' / 'disagreement.json').read_text())
    assert written['pairs']['convnet|deit']['disagreement'] == 0.4
    assert '0.400' in capsys.readouterr().out
    old = _run(tmp_path / 'old', [0, 1, 2, 3, 4], with_pred=False)  # correctness only: an older file
    assert main('disagreement', '--runs', f'convnet={a}', f'old={old}', '--out', tmp_path / 'out') == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'top1/pred' is missing" in err and str(old) in err
    assert main('disagreement', '--runs', f'{a}', '--out', tmp_path / 'out') == 2
    assert 'expected LABEL=RUN_DIR' in capsys.readouterr().err
    with pytest.raises(ValueError, match='share no test image'):
        other = tmp_path / 'other'
        other.mkdir()
        per_image.write(str(other), dict(top1=dict(kind=np.array('accuracy'), ids=np.array(['z/z.JPEG']),
                                                   correct=np.array([True]), pred=np.array([0]))))
        disagreement_matrix(dict(a=str(a), other=str(other)))
