"""tools/leaderboard.py from hand-written result.json files: rows, columns, best marks, blanks for missing
metrics, conflicting duplicates, the paper section kept apart, the md / csv / html outputs. Seeds, paired Δ and
cost: tests/test_leaderboard_seeds.py."""
import base64
import csv
import io
import json
import re
from pathlib import Path

import pytest
from _leaderboard_helpers import BACKBONE, BOX, CIFAR, SEG_SS, record, rows_by_recipe, run_tool, write
from _leaderboard_helpers import runs  # noqa: F401 - the fixture

from vitbench.results.table import Column, LeaderboardError, build_table, read_result
from vitbench.results.paper import PAPER_RESULTS, load_paper_tables
from vitbench.results.render import render_csv, render_html, render_markdown


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
    assert [next(v for c, v in r.values.items() if c.dataset == 'inat2018') for r in three
            if r.backbone.startswith('ViT-S')] == [68.0, 60.6, 64.4]


def test_paper_variants_are_named_variants():
    from backbones.factory import list_models
    names = set(list_models())
    variants = [r.variant for t in load_paper_tables() for r in t.rows if r.variant]
    assert variants and {v for v in variants if not v.startswith('timm:')} <= names
    import timm  # a row whose run swaps in a timm model (thesis Table 6.13's PiT, Swin, ...): timm names it
    assert {v.split(':', 1)[1] for v in variants if v.startswith('timm:')} <= set(timm.list_models())


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
