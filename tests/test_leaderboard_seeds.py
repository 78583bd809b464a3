"""The leaderboard over seeds: a cell's seeds aggregated (mean ± std, Student-t interval, computed again here by
hand), conflicts within a seed, the paired Δ against a baseline, and the cost columns and plots."""
import base64
import csv
import io
import json
import math
import re

import pytest
from _leaderboard_helpers import SEG_SS, record, rows_by_recipe, run_tool, write

from vitbench.results.table import Column, LeaderboardError, build_table, read_result
from vitbench.results.render import render, render_csv, render_html, render_markdown

T_975 = {2: 4.302652729911275, 3: 3.182446305284263}  # Student t quantiles (0.975; df), from the tables


def seeded(task, dataset, metrics, seed, recipe, hours=None, pretrain_hours=None, peak=None):
    rec = record(task, dataset, metrics, recipe=recipe, epochs=0 if recipe == 'scratch' else 6)
    rec['seed'] = seed
    if hours is not None:
        rec['cost'] = dict(wall_s=hours * 3600, device=dict(kind='cpu', name='test', count=1, threads=1),
                           device_hours=hours, peak_mem_MB=peak, images_per_s=10.0,
                           pretrain_device_hours=pretrain_hours, total_device_hours=hours + (pretrain_hours or 0))
    return rec


SCRATCH_SEG = [20.0, 25.0, 30.0]     # seeds 0, 1, 2: a large spread between seeds
SUPERVISED_SEG = [21.0, 26.2, 30.9]  # each seed about 1 point above scratch's run of the same seed


@pytest.fixture
def seeded_runs(tmp_path):
    root = tmp_path / 'seeded'
    for seed in range(3):
        write(root, f'sup/pretrain/seed{seed}', seeded('pretrain', 'imagenet', dict(top1=50.0 + seed), seed,
                                                       'supervised', hours=0.5, peak=900.0))
        for recipe, values, pretrain in (('supervised', SUPERVISED_SEG, 0.5), ('scratch', SCRATCH_SEG, None)):
            write(root, f'{recipe}/upernet/seed{seed}', seeded('seg', 'ade20k-demo', dict(mIoU=values[seed]), seed,
                                                               recipe, hours=0.25, pretrain_hours=pretrain,
                                                               peak=1500.0))
    write(root, 'scratch/flowers', seeded('transfer', 'flowers102', dict(top1=40.0), None, 'scratch'))
    return root


def test_seeds_of_a_cell_are_aggregated_with_mean_std_and_student_t_interval(seeded_runs):
    table = build_table([str(seeded_runs)])
    scratch = rows_by_recipe(table)['scratch']
    n, mean = 3, sum(SCRATCH_SEG) / 3
    std = math.sqrt(sum((v - mean) ** 2 for v in SCRATCH_SEG) / (n - 1))
    half = T_975[n - 1] * std / math.sqrt(n)
    summary = scratch.stats[SEG_SS]
    assert (summary.n, summary.mean, summary.std) == (3, pytest.approx(mean), pytest.approx(std))
    assert (summary.ci95_low, summary.ci95_high) == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert scratch.values[SEG_SS] == pytest.approx(mean) and scratch.samples[SEG_SS] == dict(enumerate(SCRATCH_SEG))
    assert not table.conflicts  # different seeds are no conflict
    md = render_markdown(table, [])
    assert '25.0 ± 5.0 (n=3)' in md
    assert '| 40.0 |' in md  # a cell of one run shows the plain number
    page = render_html(table, [], plots=False)
    assert f'title="mean 25.00, std 5.00, n=3, 95% CI [{mean - half:.2f}, {mean + half:.2f}] over seeds"' in page
    rows = {(r['section'], r['pretraining']): r for r in csv.DictReader(io.StringIO(render_csv(table, [])))}
    cell = rows['measured', 'scratch']
    label = SEG_SS.label
    assert (cell[label], cell[f'{label} std'], cell[f'{label} n']) == ('25', '5', '3')
    assert float(cell[f'{label} ci95_low']) == pytest.approx(mean - half, abs=1e-4)
    assert float(cell[f'{label} ci95_high']) == pytest.approx(mean + half, abs=1e-4)


def test_two_runs_of_one_seed_that_disagree_are_still_a_conflict(seeded_runs):
    write(seeded_runs, 'scratch/upernet/seed1_again', dict(seeded('seg', 'ade20k-demo', dict(mIoU=26.0), 1, 'scratch'),
                                                           created='2026-03-01T00:00:00+00:00'))
    table = build_table([str(seeded_runs)])
    (conflict,) = table.conflicts
    assert conflict.seed == 1 and [e.value for e in conflict.entries] == [26.0, 25.0]
    assert rows_by_recipe(table)['scratch'].samples[SEG_SS][1] == 26.0  # the newest of that seed is used
    assert '(seed 1)' in render_markdown(table, [])


def test_paired_delta_finds_what_unpaired_intervals_cannot(seeded_runs):
    from vitbench.results.baseline import paired_deltas
    table = build_table([str(seeded_runs)])
    rows = rows_by_recipe(table)
    sup, scratch = rows['supervised'].stats[SEG_SS], rows['scratch'].stats[SEG_SS]
    assert sup.ci95_low < scratch.ci95_high  # unpaired, the two intervals overlap: no verdict
    deltas = paired_deltas(table, 'scratch')
    (pair,) = deltas.pairs
    assert pair == (rows['supervised'], rows['scratch'])
    diffs = [a - b for a, b in zip(SUPERVISED_SEG, SCRATCH_SEG)]
    mean = sum(diffs) / 3
    half = T_975[2] * math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2) / math.sqrt(3)
    delta = deltas.of(0, SEG_SS)
    assert (delta.n, delta.mean) == (3, pytest.approx(mean))
    assert (delta.ci95_low, delta.ci95_high) == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert delta.excludes_zero and mean - half > 0
    md = render('md', table, [], baseline='scratch')  # the Δ table, the significant cell marked
    assert '## Δ vs scratch (paired by seed)' in md
    assert f'| {mean:+.1f} [{mean - half:+.1f}, {mean + half:+.1f}] (n=3) * |' in md
    rows_csv = {r['pretraining']: r for r in csv.DictReader(io.StringIO(render('csv', table, [], baseline='scratch')))}
    assert rows_csv['supervised']['delta_vs'] == 'scratch'
    assert float(rows_csv['supervised'][f'Δ {SEG_SS.label} ci95_low']) == pytest.approx(mean - half, abs=1e-4)
    assert rows_csv['scratch'][f'Δ {SEG_SS.label} mean'] == ''


def test_paired_delta_uses_only_the_seeds_both_rows_ran(seeded_runs):
    from vitbench.results.baseline import paired_deltas
    for seed in (1, 2):  # supervised ran seeds 0-2; make scratch have seed 0 only
        for path in (seeded_runs / f'scratch/upernet/seed{seed}').glob('result.json'):
            path.unlink()
    delta = paired_deltas(build_table([str(seeded_runs)]), 'scratch').of(0, SEG_SS)
    assert (delta.n, delta.mean, delta.ci95_low) == (1, pytest.approx(1.0), None)
    assert render('md', build_table([str(seeded_runs)]), [], baseline='scratch').count('+1.0 (n=1)') == 1


def test_cost_columns_and_the_pareto_and_delta_plots(seeded_runs):
    table = build_table([str(seeded_runs)])
    rows = rows_by_recipe(table)
    sup, scratch = rows['supervised'], rows['scratch']
    assert sup.pretrain_hours == pytest.approx(0.5) and scratch.pretrain_hours == 0.0
    assert sup.cell_hours[SEG_SS] == pytest.approx(0.75) and scratch.cell_hours[SEG_SS] == pytest.approx(0.25)
    assert sup.cell_hours[Column('cls', 'imagenet')] == pytest.approx(0.5)  # the pre-training, counted once
    assert sup.total_hours == pytest.approx(0.75) and sup.peak_mem_MB == 1500.0
    assert scratch.total_hours is None  # its Flowers run recorded no cost: the total is unknown, not smaller
    header = render_markdown(table, []).split('\n')[6]
    assert 'pretrain dev-h | total dev-h | peak mem (MB)' in header
    page = render('html', table, [], baseline='scratch')
    assert 'Metric vs device-hours (pre-training + task)' in page and 'Δ vs scratch, paired by seed' in page
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert all(base64.b64decode(data)[:8] == b'\x89PNG\r\n\x1a\n' for data in images)


def test_a_baseline_that_matches_no_row_is_one_clear_error(seeded_runs, tmp_path):
    from vitbench.results.baseline import paired_deltas
    with pytest.raises(LeaderboardError, match=r"baseline 'scrach' matches no row: expected a pre-training recipe "
                                               r"\(scratch, supervised\) or a backbone \(vit_demo_patch8_64\)"):
        paired_deltas(build_table([str(seeded_runs)]), 'scrach')
    result = run_tool(seeded_runs, '--baseline', 'scrach', '--out', tmp_path / 'board.md')
    assert result.returncode == 2 and "baseline 'scrach' matches no row" in result.stderr
    assert not (tmp_path / 'board.md').exists()
    result = run_tool(seeded_runs, '--baseline', 'scratch', '--out', tmp_path / 'board.md')
    assert result.returncode == 0 and '## Δ vs scratch' in (tmp_path / 'board.md').read_text()


@pytest.mark.parametrize('key, value, message', [
    ('seed', 'one', "key 'seed' is 'one'"), ('seed', 1.5, "key 'seed' is 1.5"), ('cost', [1], "key 'cost' is [1]"),
])
def test_malformed_seed_or_cost_names_the_key(tmp_path, key, value, message):
    path = write(tmp_path, 'bad', json.dumps(dict(record('seg', 'ade20k', {}), **{key: value})))
    with pytest.raises(LeaderboardError, match=re.escape(message)):
        read_result(str(path))

