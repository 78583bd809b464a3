"""The seed study (thesis §6.3.4, Figures 6.7-6.8): ``tools/pipeline.py --seed-study CONFIG --seeds A-B`` trains a
config once per seed and tabulates them; the leaderboard draws each cell's seeds as a histogram with its Gaussian
fit (checked against numpy / statistics) and each seed's (val, V2) point; the map's Figure 6.7 runs the A2 recipe."""
import base64
import json
import re
import statistics

import numpy as np
import pytest
from _leaderboard_helpers import record, write
from _pipeline_helpers import in_repo, pipeline_tool  # noqa: F401 (in_repo: autouse, the tests run from the repo)
from _tool_helpers import FIXTURES

from harness.pipeline.command import command_of
from harness.pipeline.dag import PipelineError
from harness.pipeline.seed_study import load_seed_study
from vitbench.results.columns import Column
from vitbench.results.render import render
from vitbench.results.seed_plots import (early_vs_final_figure, gaussian_fit, histogram_figure, seed_plots,
                                        spread_figure, validation_curves)
from vitbench.results.table import build_table

VAL, V2 = Column('cls', 'imagenet'), Column('cls', 'imagenet', 'v2')
# twelve seeds of one recipe (the thesis' spread: std about 0.1 on val, 0.23 on V2); seed 0 is one of them
TOP1 = [79.85, 79.61, 79.72, 79.70, 79.98, 79.50, 79.66, 79.81, 79.74, 79.69, 79.77, 79.63]
TOP1_V2 = [67.90, 68.10, 67.70, 68.69, 67.39, 68.00, 67.95, 68.20, 67.80, 67.85, 68.05, 67.60]


EPOCHS = range(10, 101, 10)  # validated every 10 epochs of 100


def curve(seed, epoch):
    """A seed's top-1 along the training: noisy early, close to the seed's final value at the end."""
    return TOP1[seed] - (100 - epoch) * 0.05 + ((seed * 7 + epoch) % 5 - 2) * (100 - epoch) / 100


@pytest.fixture
def seeded_imagenet(tmp_path):
    root = tmp_path / 'runs'
    for seed, (top1, v2) in enumerate(zip(TOP1, TOP1_V2)):
        rec = record('pretrain', 'imagenet', dict(top1=top1, top1_v2=v2), recipe='supervised', epochs=300)
        write(root, f'a2/seed{seed}', dict(rec, seed=seed))
        log = root / 'a2' / f'seed{seed}' / '20260101_000000' / 'vis_data' / 'scalars.json'
        log.parent.mkdir(parents=True)
        lines = [dict(loss=1.0, step=5)] + [{'accuracy/top1': curve(seed, e), 'accuracy/top5': 99.0, 'step': e}
                                            for e in EPOCHS]
        log.write_text('\n'.join(json.dumps(line) for line in lines) + '\n')
    for seed in range(3):  # three seeds: the table's mean ± std, too few for a histogram
        rec = record('pretrain', 'imagenet', dict(top1=70.0 + seed), recipe='supervised', epochs=100)
        write(root, f'short/seed{seed}', dict(rec, seed=seed))
    return root


def test_gaussian_fit_is_the_mean_and_sample_std():
    assert gaussian_fit(TOP1) == (pytest.approx(statistics.mean(TOP1)), pytest.approx(statistics.stdev(TOP1)))


def test_the_histogram_counts_every_seed_and_its_gaussian_holds_them():
    fig = histogram_figure(dict(enumerate(TOP1)), 'A2', 'ImageNet top-1')
    ax = fig.axes[0]
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert sum(p.get_height() for p in ax.patches) == len(TOP1)
    assert min(p.get_x() for p in bars) == pytest.approx(min(TOP1))
    (curve,) = [line for line in ax.get_lines() if line.get_label().startswith('Gaussian fit')]
    x, y = curve.get_data()
    width = ax.patches[0].get_width()
    assert np.trapezoid(y, x) / width == pytest.approx(len(TOP1), rel=0.02)  # the fit, scaled to the counts
    assert x[np.argmax(y)] == pytest.approx(statistics.mean(TOP1), abs=(x[1] - x[0]))
    (seed0,) = [line for line in ax.get_lines() if line.get_label().startswith('seed 0')]
    assert seed0.get_xdata()[0] == TOP1[0]


def test_the_leaderboard_draws_a_histogram_per_seeded_cell_and_the_val_v2_points(seeded_imagenet):
    table = build_table([str(seeded_imagenet)])
    plots = dict(seed_plots(table))
    assert {'supervised · 300ep: top-1 over seeds along the epochs',
            'supervised · 300ep: final top-1 vs earlier epochs'} <= set(plots)  # from the 12 runs' scalars.json
    histograms = [t for t in plots if t.endswith('over seeds')]
    assert len(histograms) == 2 and all('300ep' in t for t in histograms)  # val and V2 of the 12 seeds; not 3
    (pairs,) = [t for t in plots if 'per seed' in t]
    assert all(png[:8] == b'\x89PNG\r\n\x1a\n' for png in plots.values())
    page = render('html', table, [])
    titles = re.findall(r'<img alt="([^"]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert {t for t, _ in titles} >= {*histograms, pairs}
    assert all(base64.b64decode(data)[:8] == b'\x89PNG\r\n\x1a\n' for _, data in titles)
    row = next(r for r in table.rows if r.epochs == 300)
    assert row.stats[VAL].n == 12 and row.stats[VAL].std == pytest.approx(statistics.stdev(TOP1))
    assert sorted(row.samples[V2]) == list(range(12))


def test_a_seed_study_is_one_training_per_seed_then_a_leaderboard(tmp_path):
    pipeline = load_seed_study('configs/pretrain/rsb_a2_resnet50_in1k_300e.py', str(tmp_path), seeds=[1, 2, 3])
    ids = [s.id for s in pipeline.stages]
    assert ids == [f'rsb_a2_resnet50_in1k_300e/seed{k}' for k in (1, 2, 3)] + ['leaderboard']
    argv = command_of(pipeline, pipeline.stage('rsb_a2_resnet50_in1k_300e/seed2'))
    assert argv[argv.index('--cfg-options') + 1:] == ['randomness.seed=2']
    assert pipeline.stage('leaderboard').deps == ids[:-1]
    swapped = load_seed_study('configs/pretrain/deit3_small_in1k_400e.py', str(tmp_path / 's'), seeds=[0, 1],
                              backbone='timm:resnet50')
    argv = command_of(swapped, swapped.stages[0])
    assert argv[argv.index('--backbone') + 1] == 'timm:resnet50'
    with pytest.raises(PipelineError, match='a seed study needs at least 2'):
        load_seed_study('configs/pretrain/rsb_a2_resnet50_in1k_300e.py', str(tmp_path), seeds=[0])
    with pytest.raises(PipelineError, match='--seed-study configs/nope.py: no such config file'):
        load_seed_study('configs/nope.py', str(tmp_path))


def test_the_tool_runs_a_seed_study_of_a_toy_recipe(tmp_path, monkeypatch, capsys):
    """Two real trainings (the toy regressor, a few seconds each), each with its seed, and the leaderboard of them."""
    monkeypatch.setenv('PYTHONPATH', str(FIXTURES))  # the toy components, in the stages' processes
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_config.py')!r}]\n"
                      "experiment = dict(task='pretrain', dataset='toy', backbone='vit_demo_patch8_64')\n")
    assert pipeline_tool('--seed-study', str(config), '--seeds', '3-4', '--work-dir', str(tmp_path / 'run')) == 0
    records = [json.loads((tmp_path / 'run' / 'toy_experiment' / f'seed{k}' / 'result.json').read_text())
               for k in (3, 4)]
    assert [r['seed'] for r in records] == [3, 4]
    assert len({r['metrics']['loss'] for r in records}) == 2  # other seeds, other runs
    assert '| 2 |' in (tmp_path / 'run' / 'leaderboard.md').read_text()  # one row of two runs
    assert pipeline_tool('--seed-study', str(config), '--table', 'thesis:6.2', '--dry-run') == 2
    assert 'one of them' in capsys.readouterr().err


def test_figure_6_7_runs_the_a2_recipe_and_records_the_thesis_statistics():
    from vitbench.results.paper_map import load_map, row_runs
    tables = {t.key: t for t in load_map()}
    figure = tables['thesis:Figure 6.7']
    runs = {run.config for row in figure.rows for run in row_runs(row)}
    assert runs == {'configs/pretrain/rsb_a2_resnet50_in1k_300e.py'}
    mean = next(r for r in figure.rows if r['note'].startswith('mean'))
    assert (mean['cls/imagenet'], mean['cls/imagenet/real'], mean['cls/imagenet/v2']) == (79.72, 85.37, 67.99)
    assert tables['thesis:Figure 6.8'].same_as == 'thesis:Figure 6.7'


def test_the_a2_recipe_trains_on_demo_data(tmp_path):
    """configs/pretrain/rsb_a2_resnet50_in1k_300e.py, one epoch on 16 demo images at 64 px with timm's test_resnet
    swapped in (as --backbone): the LAMB groups, BCE above 0.2 and RandAugment m7 run."""
    import os
    import subprocess
    import sys

    from harness import demo_data
    from _tool_helpers import REPO
    assert demo_data.generate(demo_data.select(['imagenet']), str(tmp_path / 'demo'), scale='tiny',
                              log=lambda m: None) == []
    root = tmp_path / 'demo' / 'imagenet'
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader') for key in (
        f'dataset.data_root={root}', 'num_workers=0', 'persistent_workers=False', 'dataset.indices=16',
        'batch_size=8', 'dataset.pipeline.1.size=64')]
    options += ['model.num_classes=25', 'model.data_preprocessor.num_classes=25', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'param_scheduler.0.end=1', 'param_scheduler.1.begin=1',
                'val_cfg.extra_sets=[]', 'train_dataloader.dataset.pipeline.3.img_size=64']
    result = subprocess.run([sys.executable, 'tools/train.py', 'configs/pretrain/rsb_a2_resnet50_in1k_300e.py',
                             '--work-dir', str(tmp_path / 'run'), '--backbone', 'timm:test_resnet',
                             '--cfg-options', *options], cwd=REPO, capture_output=True, text=True, timeout=600,
                            env=dict(os.environ, OMP_NUM_THREADS='1'))
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    record = json.loads((tmp_path / 'run' / 'result.json').read_text())
    assert record['backbone'] == 'timm:test_resnet' and 0 <= record['metrics']['top1'] <= 100
    assert record['pretrain'] == dict(recipe='supervised', epochs=1, checkpoint=None)


def test_the_validations_along_the_epochs_give_the_spread_and_the_early_vs_final_points(seeded_imagenet):
    runs = sorted(str(p) for p in seeded_imagenet.glob('a2/*/result.json'))
    curves = validation_curves(runs + [str(seeded_imagenet / 'short' / 'seed0' / 'result.json')])  # no log: left out
    assert sorted(curves) == list(range(12)) and curves[3] == {e: curve(3, e) for e in EPOCHS}
    ax = spread_figure(curves, 'A2').axes[0]
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    values = np.array([[curve(s, e) for e in EPOCHS] for s in range(12)])
    assert np.allclose(lines['mean'], values.mean(0)) and np.allclose(lines['min'], values.min(0))
    assert np.allclose(lines['max'], values.max(0))
    fig = early_vs_final_figure(curves, 'A2')
    assert [a.get_xlabel() for a in fig.axes] == ['top-1 at epoch 50', 'top-1 at epoch 80', 'top-1 at epoch 90']
    late = fig.axes[-1].collections[0].get_offsets()
    assert np.allclose(late, [[curve(s, 90), curve(s, 100)] for s in range(12)])
