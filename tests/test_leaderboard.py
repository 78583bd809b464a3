"""tools/leaderboard.py from hand-written result.json files: rows, columns, best marks, blanks for missing
metrics, conflicting duplicates, the paper section kept apart, the md / csv / html outputs; seeds aggregated
(mean ± std, Student-t interval, computed again here by hand), paired Δ against a baseline, and cost."""
import base64
import csv
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vitbench.results.table import Column, LeaderboardError, build_table, read_result
from vitbench.results.paper import PAPER_RESULTS, load_paper_tables
from vitbench.results.render import render, render_csv, render_html, render_markdown

REPO = Path(__file__).resolve().parents[1]
BACKBONE = 'vit_demo_patch8_64'


def record(task, dataset, metrics, recipe='mae', epochs=6, eval='ss', created='2026-01-01T00:00:00+00:00',
           overrides=None, gflops=0.22, **pretrain_extra):
    return dict(task=task, dataset=dataset, backbone=BACKBONE, backbone_overrides=overrides or {},
                pretrain=dict(recipe=recipe, epochs=epochs, checkpoint=None, **pretrain_extra), metrics=metrics,
                eval=eval, params_M=2.72, gflops=gflops, config=f'configs/demo/{task}.py', git_commit='abc',
                created=created)


def write(root: Path, name: str, rec) -> Path:
    path = root / name / 'result.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(rec if isinstance(rec, str) else json.dumps(rec))
    return path


@pytest.fixture
def runs(tmp_path):
    return make_runs(tmp_path / 'runs')


def make_runs(root: Path) -> Path:
    """Three pre-trainings plus scratch; MAE has no COCO run (a missing metric); a conflicting duplicate."""
    write(root, 'sup/pretrain', record('pretrain', 'imagenet', dict(top1=64.8, top5=98.6, loss=0.4),
                                       recipe='supervised', overrides=dict(img_size=48), gflops=0.12))
    write(root, 'mae/pretrain', record('pretrain', 'imagenet', dict(reconstruction_mse=0.53, loss=0.5)))
    write(root, 'dmae/pretrain', record('pretrain', 'imagenet', dict(loss=0.54), recipe='dmae'))
    for recipe, epochs, miou, box, cifar, flowers in (('supervised', 6, 30.5, 12.0, 91.0, 20.5),
                                                      ('mae', 6, 28.25, None, 88.0, 15.0),
                                                      ('dmae', 6, 33.0, 14.5, 90.0, 22.0),
                                                      ('scratch', 0, 25.0, 8.0, 85.0, 16.1)):
        write(root, f'{recipe}/upernet', record('seg', 'ade20k-demo', dict(mIoU=miou, mAcc=40.0, aAcc=80.0),
                                                 recipe=recipe, epochs=epochs))
        if box is not None:
            write(root, f'{recipe}/maskrcnn', record('det', 'coco-demo', dict(bbox_mAP=box, segm_mAP=box - 1),
                                                      recipe=recipe, epochs=epochs))
        write(root, f'{recipe}/cifar10', record('transfer', 'cifar10', dict(top1=cifar, top5=99.0), recipe=recipe,
                                                 epochs=epochs, overrides=dict(img_size=32), gflops=0.06))
        write(root, f'{recipe}/flowers', record('transfer', 'flowers102', dict(top1=flowers), recipe=recipe,
                                                 epochs=epochs))
    # the same MAE segmentation run again, later, with another result: a conflict
    write(root, 'mae/upernet_again', record('seg', 'ade20k-demo', dict(mIoU=29.75),
                                            created='2026-02-01T00:00:00+00:00'))
    # an identical duplicate is no conflict
    write(root, 'dmae/flowers_copy', record('transfer', 'flowers102', dict(top1=22.0), recipe='dmae'))
    # a multi-scale evaluation gets its own column
    write(root, 'dmae/upernet_ms', record('seg', 'ade20k-demo', dict(mIoU=34.0), recipe='dmae', eval='ms'))
    return root


SEG_SS, SEG_MS = Column('seg', 'ade20k-demo', 'ss'), Column('seg', 'ade20k-demo', 'ms')
BOX, CIFAR, FLOWERS = Column('box', 'coco-demo'), Column('transfer', 'cifar10'), Column('transfer', 'flowers102')


def rows_by_recipe(table):
    return {r.recipe: r for r in table.rows}


def test_one_row_per_backbone_recipe_epochs_with_the_papers_columns(runs):
    table = build_table([str(runs)])
    rows = rows_by_recipe(table)
    assert set(rows) == {'supervised', 'mae', 'dmae', 'scratch'}
    assert [c.label for c in table.columns] == [
        'ImageNet top-1', 'ADE20k-demo mIoU SS', 'ADE20k-demo mIoU MS', 'COCO-demo box AP', 'COCO-demo mask AP',
        'CIFAR-10 top-1', 'Flowers-102 top-1']
    assert rows['supervised'].values[Column('cls', 'imagenet')] == 64.8
    assert rows['scratch'].epochs == 0 and rows['scratch'].values[CIFAR] == 85.0
    assert len(rows['supervised'].runs) == 5
    # params / GFLOPs: the runs at the variant's own resolution, not the 48 px pre-training or 32 px transfer
    assert rows['supervised'].gflops == 0.22 and rows['supervised'].params_M == 2.72


def test_missing_metrics_are_blank_not_zero(runs):
    table = build_table([str(runs)])
    mae = rows_by_recipe(table)['mae']
    assert BOX not in mae.values and Column('cls', 'imagenet') not in mae.values
    md = render_markdown(table, [])
    mae_line = next(line for line in md.splitlines() if line.startswith(f'| {BACKBONE} | mae |'))
    cells = [c.strip() for c in mae_line.strip('|').split('|')]
    header = next(line for line in md.splitlines() if line.startswith('| backbone'))
    names = [c.strip() for c in header.strip('|').split('|')]
    assert cells[names.index('COCO-demo box AP')] == '' and cells[names.index('ImageNet top-1')] == ''
    assert '0.0' not in cells
    rows = list(csv.DictReader(io.StringIO(render_csv(table, []))))
    assert next(r for r in rows if r['pretraining'] == 'mae')['COCO-demo box AP'] == ''


def test_conflicting_duplicates_are_reported_and_the_newest_shown(runs):
    table = build_table([str(runs)])
    assert len(table.conflicts) == 1  # the identical flowers copy is not one
    conflict = table.conflicts[0]
    assert conflict.row == (BACKBONE, 'mae', 6) and conflict.column == SEG_SS
    assert [e.value for e in conflict.entries] == [29.75, 28.25]
    assert rows_by_recipe(table)['mae'].values[SEG_SS] == 29.75
    md = render_markdown(table, [])
    warnings = md.split('## Warnings: conflicting duplicate runs')[1]
    assert 'ADE20k-demo mIoU SS' in warnings and 'upernet_again' in warnings and '28.2' in warnings
    assert 'conflicting duplicate runs' in render_html(table, [], plots=False)


def test_best_value_of_each_column_is_marked(runs):
    table = build_table([str(runs)])
    best = {c.label: [r.recipe for r in table.rows if table.is_best(r, c)] for c in table.columns}
    assert best['ADE20k-demo mIoU SS'] == ['dmae'] and best['CIFAR-10 top-1'] == ['supervised']
    assert best['ImageNet top-1'] == [] and best['ADE20k-demo mIoU MS'] == []  # a single value ranks nothing
    md = render_markdown(table, [])
    assert '| **33.0** |' in md and '| **91.0** |' in md and '**64.8**' not in md
    rows = list(csv.DictReader(io.StringIO(render_csv(table, []))))
    assert 'ADE20k-demo mIoU SS' in next(r for r in rows if r['pretraining'] == 'dmae')['best'].split('; ')
    assert '<td class="num best"><strong>33.0</strong></td>' in render_html(table, [], plots=False)


def test_finetuned_top1_wins_over_the_pretraining_run_and_ft_backbones_get_their_own_row(tmp_path):
    write(tmp_path, 'pre', record('pretrain', 'imagenet', dict(top1=60.0), recipe='supervised'))
    write(tmp_path, 'ft', record('finetune', 'imagenet', dict(top1=70.0), recipe='supervised'))
    write(tmp_path, 'lin', record('finetune', 'imagenet', dict(top1=40.0), recipe='supervised', eval='linear'))
    write(tmp_path, 'down', record('transfer', 'cifar10', dict(top1=90.0), recipe='supervised',
                                   finetune=dict(mode='attention', epochs=2)))
    table = build_table([str(tmp_path)])
    assert not table.conflicts
    rows = rows_by_recipe(table)
    assert rows['supervised'].values == {Column('cls', 'imagenet'): 70.0, Column('cls', 'imagenet', 'linear'): 40.0}
    assert rows['supervised + ft-attention 2ep'].values == {CIFAR: 90.0}
    assert 'ImageNet top-1 (linear)' in [c.label for c in table.columns]


def test_imagenet_v2_and_real_are_columns_beside_imagenet_top1(tmp_path):
    write(tmp_path, 'ft', record('finetune', 'imagenet', dict(top1=70.0, top5=90.0, top1_v2=58.5, top1_real=76.0),
                                 recipe='supervised'))
    write(tmp_path, 'lin', record('finetune', 'imagenet', dict(top1=40.0, top1_v2=30.0), recipe='supervised',
                                  eval='linear'))
    write(tmp_path, 'seg', record('seg', 'ade20k-demo', dict(mIoU=30.0), recipe='supervised'))
    table = build_table([str(tmp_path)])
    assert [c.label for c in table.columns] == [
        'ImageNet top-1', 'ImageNet top-1 (linear)', 'ImageNet top-1 (linear, v2)', 'ImageNet top-1 (real)',
        'ImageNet top-1 (v2)', 'ADE20k-demo mIoU SS']
    values = rows_by_recipe(table)['supervised'].values
    assert values[Column('cls', 'imagenet', 'v2')] == 58.5 and values[Column('cls', 'imagenet', 'real')] == 76.0
    assert values[Column('cls', 'imagenet', 'linear, v2')] == 30.0


def test_paper_rows_stay_in_their_own_section(runs):
    table, paper = build_table([str(runs)]), load_paper_tables()
    md = render_markdown(table, paper)
    measured, paper_part = md.split('## Paper reference results (not measured here)')
    assert '49.3' not in measured and 'DeiT III ViT-B' not in measured
    assert 'Table 6.12' in paper_part and 'Table 4' in paper_part and 'Table 6:' in paper_part
    assert 'Table 3.7' in paper_part and 'Table 3.19' in paper_part
    rows = list(csv.DictReader(io.StringIO(render_csv(table, paper))))
    sections = [r['section'] for r in rows]
    assert sections[:4] == ['measured'] * 4 and set(sections[4:]) > {'paper: deit3_ade20k', 'paper: maelite_table4'}
    deit3_b = next(r for r in rows
                   if r['section'] == 'paper: deit3_ade20k' and r['backbone'].startswith('DeiT III ViT-B ('))
    assert (deit3_b['ADE20k mIoU SS'], deit3_b['ADE20k mIoU MS']) == ('49.3', '50.2')
    assert deit3_b['best'] == '' and deit3_b['runs'] == ''
    page = render_html(table, paper, plots=False)
    assert page.index('class="measured"') < page.index('class="paper"')
    assert '49.3' not in page[:page.index('class="paper"')]


def test_paper_numbers_match_the_sources():
    by_id = {t.id: t for t in load_paper_tables()}
    assert set(by_id) >= {'deit3_ade20k', 'maelite_table4', 'maelite_table5', 'three_things_table6',
                          'deit_transfer', 'cait_transfer', 'deit3_transfer'}

    def value(table_id, model, column):
        return next(r for r in by_id[table_id].rows if r.backbone.split(' (')[0] == model).values.get(column)

    ade = Column('seg', 'ade20k', 'ss')
    assert value('deit3_ade20k', 'DeiT III ViT-B', ade) == 49.3
    assert value('deit3_ade20k', 'DeiT III ViT-L', Column('seg', 'ade20k', 'ms')) == 52.0
    assert value('maelite_table4', 'MAE-Tiny', Column('transfer', 'flowers102')) == 85.8
    assert value('maelite_table5', 'Distilled MAE-Tiny', Column('box', 'coco')) == 42.7
    assert value('maelite_table5', 'Distilled MAE-Tiny', Column('transfer', 'pets')) is None  # not in the text
    assert value('cait_transfer', 'CaiT-M-36Υ', Column('transfer', 'inat2018')) == 78.0
    assert value('deit_transfer', 'DeiT-B', Column('transfer', 'cifar10')) == 99.1
    three = by_id['three_things_table6'].rows
    assert [r.values[Column('transfer', 'inat2018')] for r in three if r.backbone == 'ViT-S'] == [68.0, 60.6, 64.4]


def test_paper_variants_are_named_variants():
    from backbones.factory import list_models
    names = set(list_models())
    variants = [r.variant for t in load_paper_tables() for r in t.rows if r.variant]
    assert variants and set(variants) <= names


def test_html_embeds_png_plots(runs):
    page = render_html(build_table([str(runs)]), load_paper_tables())
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) >= 4  # mIoU vs GFLOPs, transfer, detection, ImageNet; + the paper's mIoU vs GFLOPs
    assert all(base64.b64decode(data)[:8] == b'\x89PNG\r\n\x1a\n' for data in images)
    assert 'Segmentation mIoU vs backbone GFLOPs' in page and 'Transfer top-1 per dataset' in page


@pytest.mark.parametrize('content, message', [
    ('{"task": "seg",', 'not valid JSON'),
    ('[1, 2]', 'expected a JSON object'),
    (json.dumps({k: v for k, v in record('seg', 'ade20k', {}).items() if k != 'metrics'}), "missing key 'metrics'"),
    (json.dumps(record('segmentation', 'ade20k', {})), "key 'task' is 'segmentation'"),
    (json.dumps(record('seg', 'ade20k', dict(mIoU='47.5'))), "key 'metrics.mIoU' is '47.5'"),
    (json.dumps(record('seg', 'ade20k', {}, epochs='six')), "key 'pretrain.epochs'"),
])
def test_malformed_result_json_names_the_file_and_key(tmp_path, content, message):
    path = write(tmp_path, 'bad', content)
    with pytest.raises(LeaderboardError) as info:
        read_result(str(path))
    assert str(path) in str(info.value) and message in str(info.value)


def run_tool(*args):
    return subprocess.run([sys.executable, 'tools/leaderboard.py', *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_tool_writes_each_format_and_reports_conflicts(runs, tmp_path):
    for name in ('board.md', 'board.csv', 'board.html'):
        result = run_tool(runs, '--out', tmp_path / name)
        assert result.returncode == 0, result.stderr
        assert 'warning: conflicting runs' in result.stderr
    assert (tmp_path / 'board.md').read_text().startswith('# vitbench leaderboard')
    assert (tmp_path / 'board.csv').read_text().startswith('section,backbone,pretraining,epochs')
    assert '<img alt=' in (tmp_path / 'board.html').read_text()
    stdout = run_tool(runs, '--format', 'csv', '--no-paper')
    assert stdout.returncode == 0 and 'paper:' not in stdout.stdout and stdout.stdout.count('\nmeasured,') == 4


def test_tool_errors_name_the_file_and_key(tmp_path):
    bad = write(tmp_path, 'run', json.dumps(record('seg', 'ade20k', dict(mIoU=None))))
    result = run_tool(tmp_path)
    assert result.returncode == 2 and str(bad) in result.stderr and "'metrics.mIoU'" in result.stderr
    result = run_tool(tmp_path / 'nowhere')
    assert result.returncode == 2 and 'nowhere' in result.stderr and 'does not exist' in result.stderr
    result = run_tool(tmp_path, '--out', tmp_path / 'board.txt')
    assert result.returncode == 2 and 'board.txt' in result.stderr


def test_paper_file_errors_name_table_row_and_key(tmp_path):
    bad = tmp_path / 'paper.yaml'
    bad.write_text('tables:\n  - {id: t, source: S, rows: [{model: M, seg/ade20k/ss: 40.1, segm/ade20k: 1}]}\n')
    with pytest.raises(LeaderboardError, match=r"table 't' rows\[0\] \(M\): unknown key 'segm/ade20k'"):
        load_paper_tables(str(bad))
    assert Path(PAPER_RESULTS).is_file()


# ---------------------------------------------------------------------------------------------- seeds, Δ, cost

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


def test_figures_made_by_other_stages_are_embedded_in_the_html_and_listed_in_markdown(runs, tmp_path):
    from vitbench.results.render import write_leaderboard
    png = b'\x89PNG\r\n\x1a\n' + b'\x00' * 16  # the page embeds the bytes as they are
    figure = tmp_path / 'analysis' / 'cka.png'
    figure.parent.mkdir()
    figure.write_bytes(png)
    outputs = {'html': str(tmp_path / 'board.html'), 'md': str(tmp_path / 'board.md')}
    write_leaderboard([str(runs)], outputs, paper=False, figures=[str(figure)])
    page = (tmp_path / 'board.html').read_text()
    assert '<h2>Figures</h2>' in page and base64.b64encode(png).decode() in page
    assert f'## Figures\n\n- `{figure}`' in (tmp_path / 'board.md').read_text()
    write_leaderboard([str(runs)], outputs, paper=False)
    assert '<h2>Figures</h2>' not in (tmp_path / 'board.html').read_text()
