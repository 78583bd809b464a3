"""Reported vs reproduced: measured cells that are the same experiment as a paper row (config, variant, recipe,
epochs, column) show the paper's number and Δ in every format; anything else links to nothing; the
--check-reproduction mode lists the cells beyond a tolerance; the paper rows' links are well formed and name
configs that exist and train what the row says."""
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mmengine.config import Config

from harness.experiment.linked_protocol import config_protocol
from vitbench.results.paper import link_column, load_paper_tables
from vitbench.results.render import measured_and_paper, render
from vitbench.results.paper_map import load_map, row_runs
from vitbench.results.reproduction import beyond, check_lines, link_reported, match_reported, resolve_linked
from vitbench.results.table import Column, LeaderboardError, Row, build_table

REPO = Path(__file__).resolve().parents[1]
TOP1, V2, REAL = Column('cls', 'imagenet'), Column('cls', 'imagenet', 'v2'), Column('cls', 'imagenet', 'real')
DEIT3_B_400 = 'configs/pretrain/deit3_base_in1k_400e.py'  # thesis Table 6.15: 83.1 / ReaL 87.7 / V2 72.6
MAE_LITE_FT = 'configs/finetune/mae_lite_vit_tiny12h_ft_300e.py'  # MAE-lite: 78.0 from MAE, 78.4 from dMAE


def record(config, metrics, backbone='deit3_base_patch16_224', recipe='supervised', epochs=400, task='pretrain',
           seed=0, img_size=224, created='2026-01-01T00:00:00+00:00', eval='ss'):
    return dict(task=task, dataset='imagenet', backbone=backbone, backbone_overrides=dict(img_size=img_size),
                pretrain=dict(recipe=recipe, epochs=epochs, checkpoint=None), metrics=metrics, eval=eval,
                img_size=img_size, variant_img_size=224, params_M=86.6, gflops=17.6, seed=seed, config=config,
                git_commit='abc', created=created)


def write(root: Path, name: str, rec) -> Path:
    path = root / name / 'result.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))
    return path


@pytest.fixture
def runs(tmp_path):
    root = tmp_path / 'runs'
    write(root, 'deit3_b', record(DEIT3_B_400, dict(top1=82.6, top5=96.0, top1_v2=72.0, top1_real=87.9)))
    # the same config shortened (--cfg-options train_cfg.max_epochs=1 records 1 epoch): not the paper's run
    write(root, 'short', record(DEIT3_B_400, dict(top1=3.0), epochs=1))
    # the same config with --backbone deit3_small_patch16_224: another model
    write(root, 'swapped', record(DEIT3_B_400, dict(top1=79.0), backbone='deit3_small_patch16_224'))
    # one fine-tuning config from an MAE and from a distilled-MAE pre-training: two experiments, two numbers
    for recipe, top1 in (('mae', 77.9), ('dmae', 78.9)):
        write(root, f'{recipe}_ft', record(MAE_LITE_FT, dict(top1=top1), backbone='vit_tiny12h_patch16_224',
                                           recipe=recipe, task='finetune'))
    # a demo run: no paper row names its config
    write(root, 'demo', record('configs/demo/deit3_sup_demo.py', dict(top1=41.0), backbone='vit_demo_patch8_64',
                               epochs=6))
    return root


def links_of(root):
    return {(link.row.backbone, link.row.recipe, link.row.epochs, link.column): link
            for link in link_reported(build_table([str(root)]), load_paper_tables())}


def test_a_run_of_a_paper_config_gets_the_papers_numbers_and_delta(runs):
    links = links_of(runs)
    assert set(links) == {('deit3_base_patch16_224', 'supervised', 400, c) for c in (TOP1, V2, REAL)} | {
        ('vit_tiny12h_patch16_224', 'mae', 400, TOP1), ('vit_tiny12h_patch16_224', 'dmae', 400, TOP1)}
    top1 = links['deit3_base_patch16_224', 'supervised', 400, TOP1]
    assert top1.reported == 83.1 and top1.delta == pytest.approx(-0.5)
    assert ('deit3_table6_15', 'ViT-B (deit3_base_patch16_224)') in top1.sources
    assert links['deit3_base_patch16_224', 'supervised', 400, V2].reported == 72.6
    assert links['deit3_base_patch16_224', 'supervised', 400, REAL].delta == pytest.approx(0.2)
    assert links['vit_tiny12h_patch16_224', 'mae', 400, TOP1].reported == 78.0
    dmae = links['vit_tiny12h_patch16_224', 'dmae', 400, TOP1]
    assert dmae.reported == 78.4 and [t for t, _ in dmae.sources] == ['maelite_table5']


def test_every_format_shows_reported_and_delta_beside_the_measured_value(runs):
    table, paper = build_table([str(runs)]), load_paper_tables()
    md = render('md', table, paper)
    measured = md.split('## Paper reference results')[0]
    assert '82.6 (paper 83.1, Δ -0.5)' in measured and '72.0 (paper 72.6, Δ -0.6)' in measured
    section = measured.split('## Reported vs reproduced')[1]
    assert '| deit3_base_patch16_224 | supervised | 400 | ImageNet top-1 | 82.6 | 83.1 | -0.5 |' in section
    assert '| vit_tiny12h_patch16_224 | dmae | 400 | ImageNet top-1 | 78.9 | 78.4 | +0.5 |' in section
    assert '3.0 (paper' not in measured and '79.0 (paper' not in measured and '41.0 (paper' not in measured
    rows = {(r['backbone'], r['pretraining'], r['epochs']): r
            for r in csv.DictReader(io.StringIO(render('csv', table, paper))) if r['section'] == 'measured'}
    deit3 = rows['deit3_base_patch16_224', 'supervised', '400']
    assert (deit3['ImageNet top-1 reported'], deit3['ImageNet top-1 Δ reported']) == ('83.1', '-0.5')
    assert 'deit3_table6_15' in deit3['ImageNet top-1 reported in']
    assert rows['deit3_base_patch16_224', 'supervised', '1']['ImageNet top-1 reported'] == ''
    page = render('html', table, paper)
    # the paper's number on the cell's second line
    assert '<h2>Reported vs reproduced</h2>' in page and '82.6</strong> <span class="ci">(paper 83.1, Δ -0.5)</span>' in page
    assert 'paper: deit3_table6_15' in page  # the cell's tooltip names the source
    assert 'Reported vs reproduced' not in render('md', table, [])  # without paper data nothing links


def test_runs_of_one_cell_from_different_configs_are_not_one_experiment(tmp_path):
    """Two configs that give one row label (MAE-lite Table 1's two from-scratch recipes) are two cells, each
    named by its config; only the paper config's links."""
    other = 'configs/pretrain/deit3_base_in1k_800e.py'
    write(tmp_path, 'a', record(DEIT3_B_400, dict(top1=83.0), seed=0))
    write(tmp_path, 'b', record(other, dict(top1=83.2), seed=1))
    measured = build_table([str(tmp_path)])
    assert sorted(c.setting for c in measured.rows[0].stats if c.base == TOP1) == [
        'deit3_base_in1k_400e', 'deit3_base_in1k_800e']
    assert any('config deit3_base_in1k_400e vs deit3_base_in1k_800e' in s for s in measured.splits)
    link, = link_reported(measured, load_paper_tables())
    assert (link.column.setting, link.measured.n, link.reported) == ('deit3_base_in1k_400e', 1, 83.1)
    write(tmp_path, 'b', record(DEIT3_B_400, dict(top1=83.2), seed=1))  # two seeds of the paper's config
    link = links_of(tmp_path)['deit3_base_patch16_224', 'supervised', 400, TOP1]
    assert link.measured.n == 2 and link.delta == pytest.approx(0.0)


# ------------------------------------------------------------------------- fine-tuning resolution (the papers' ↑384)

FT224, FT384 = 'configs/finetune/deit3_base_in1k_ft224.py', 'configs/finetune/deit3_base_full_ft384.py'
TOP1_384, V2_384 = TOP1.at('384'), V2.at('384')


@pytest.fixture
def two_resolutions(tmp_path):
    """The 800-epoch ViT-B pre-training (at 192), its 224 fine-tune and its 384 fine-tune (thesis Table 6.7)."""
    write(tmp_path, 'pretrain', record('configs/pretrain/deit3_base_in1k_800e.py', dict(top1=82.5), epochs=800,
                                       img_size=192))
    write(tmp_path, 'ft224', record(FT224, dict(top1=83.6, top1_v2=73.4), epochs=800, task='finetune'))
    write(tmp_path, 'ft384', record(FT384, dict(top1=84.9, top1_v2=74.9), epochs=800, task='finetune', img_size=384,
                                    created='2026-01-02T00:00:00+00:00'))
    return tmp_path


def test_a_224_and_a_384_finetune_of_one_pretraining_are_two_cells_not_a_conflict(two_resolutions):
    table = build_table([str(two_resolutions)])
    assert table.conflicts == []
    [row] = table.rows
    assert row.key == ('deit3_base_patch16_224', 'supervised', 800)
    assert (row.values[TOP1], row.values[V2], row.values[TOP1_384], row.values[V2_384]) == (83.6, 73.4, 84.9, 74.9)
    assert [c.label for c in table.columns] == ['ImageNet top-1', 'ImageNet top-1 (v2)', 'ImageNet top-1 ↑384',
                                                'ImageNet top-1 (v2) ↑384']
    assert row.cell_configs[TOP1] == (FT224,) and row.cell_configs[TOP1_384] == (FT384,)
    md = render('md', table, [])
    assert 'ImageNet top-1 ↑384' in md and 'conflicting duplicate runs' not in md


def test_the_papers_384_rows_link_to_the_384_cell_and_the_224_rows_to_the_224_one(two_resolutions):
    links = links_of(two_resolutions)
    key = ('deit3_base_patch16_224', 'supervised', 800)
    assert set(links) == {(*key, c) for c in (TOP1, V2, TOP1_384, V2_384)}
    up384 = links[(*key, TOP1_384)]
    assert up384.reported == 85.0 and up384.delta == pytest.approx(-0.1)
    assert up384.sources == (('deit3_table6_7', 'DeiT III ViT-B↑384 (deit3_base_patch16_224)'),)
    assert links[(*key, V2_384)].reported == 74.8
    assert links[(*key, TOP1)].reported == 83.8 and links[(*key, V2)].reported == 73.6
    assert 'ImageNet top-1 ↑384 | 84.9 | 85.0 | -0.1' in '\n'.join(
        render('md', build_table([str(two_resolutions)]), load_paper_tables()).splitlines())


def test_a_384_paper_row_s_mce_links_to_the_384_column_as_its_top1_does():
    # every resolution kind (vitbench.results.schema.resolution_kinds) follows the row's resolution, not top-1 alone
    row, mce = Row('deit3_base_patch16_224', 'supervised', 800, res='384'), Column('mce', 'imagenet')
    assert link_column(row, mce) == mce.at('384') and link_column(row, TOP1) == TOP1_384
    assert link_column(row, Column('seg', 'ade20k', 'ss')) == Column('seg', 'ade20k', 'ss')  # no resolution kind


def test_two_runs_at_one_resolution_with_one_seed_still_conflict(two_resolutions):
    write(two_resolutions, 'ft384_again', record(FT384, dict(top1=85.3), epochs=800, task='finetune', img_size=384,
                                                 created='2026-01-03T00:00:00+00:00'))
    table = build_table([str(two_resolutions)])
    [conflict] = table.conflicts
    assert conflict.column == TOP1_384 and [e.value for e in conflict.entries] == [85.3, 84.9]
    assert table.rows[0].values[TOP1] == 83.6  # the 224 fine-tune is untouched
    # another seed at 384 is no conflict: the cell holds the mean over seeds
    write(two_resolutions, 'ft384_again', record(FT384, dict(top1=85.3), epochs=800, task='finetune', img_size=384,
                                                 seed=1))
    table = build_table([str(two_resolutions)])
    assert table.conflicts == [] and table.rows[0].stats[TOP1_384].n == 2


# ------------------------------------------------------------- fine-tuning mode ("Three things" Table 5)

ATTN384, FFN384 = 'configs/finetune/deit3_base_attn_ft384.py', 'configs/finetune/deit3_base_ffn_ft384.py'


@pytest.mark.parametrize('config, mode', [(FT384, 'ss'), (ATTN384, 'attention'), (FFN384, 'ffn'),
                                          ('configs/finetune/mae_vit_tiny12h_linprobe.py', 'linear')])
def test_a_finetune_records_its_mode_as_its_eval(config, mode):
    from harness.experiment.result_record import eval_of
    cfg = Config.fromfile(str(REPO / config))
    assert eval_of(cfg, dict(cfg.experiment)) == mode


def test_full_attention_and_ffn_finetunes_of_one_pretraining_are_three_cells_each_linked(tmp_path):
    """Table 5's three ViT-B↑384 fine-tunes of one 400-epoch model: no conflict, each against its own paper row."""
    for name, config, mode, top1 in (('full', FT384, 'ss', 84.2), ('attn', ATTN384, 'attention', 84.0),
                                     ('ffn', FFN384, 'ffn', 83.9)):
        write(tmp_path, name, record(config, dict(top1=top1), task='finetune', img_size=384, eval=mode))
    table = build_table([str(tmp_path)])
    assert table.conflicts == []
    [row] = table.rows
    full, attn, ffn = TOP1_384, Column('cls', 'imagenet', 'attention', '384'), Column('cls', 'imagenet', 'ffn', '384')
    assert (row.values[full], row.values[attn], row.values[ffn]) == (84.2, 84.0, 83.9)
    assert attn.label == 'ImageNet top-1 (attention) ↑384'
    links = links_of(tmp_path)
    key = ('deit3_base_patch16_224', 'supervised', 400)
    assert (links[(*key, full)].reported, links[(*key, attn)].reported, links[(*key, ffn)].reported) == (
        84.3, 84.3, 84.1)


def test_a_paper_rows_img_size_must_be_a_resolution(tmp_path):
    bad = tmp_path / 'paper.yaml'
    bad.write_text('tables:\n  - {id: t, source: S, rows: [{model: M, img_size: high, cls/imagenet: 1.0}]}\n')
    with pytest.raises(LeaderboardError, match=r"table 't' rows\[0\] \(M\): key 'img_size' is 'high'"):
        load_paper_tables(str(bad))


def run_tool(*args):
    return subprocess.run([sys.executable, 'tools/leaderboard.py', *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


def test_check_reproduction_lists_the_cells_beyond_the_tolerance(runs, tmp_path):
    result = run_tool(runs, '--check-reproduction', '0.3')
    assert result.returncode == 1, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == '5 measured cells linked to paper rows; 3 beyond ±0.3'
    assert any(line.startswith('deit3_base_patch16_224 / supervised / 400 epochs, ImageNet top-1: measured 82.60')
               and 'reported 83.10' in line and 'Δ -0.50' in line for line in lines)
    assert not any('ReaL' in line or 'real' in line for line in lines[:-1])  # +0.2 is within 0.3
    assert run_tool(runs, '--check-reproduction', '0.6').returncode == 0
    empty = tmp_path / 'empty'
    write(empty, 'demo', record('configs/demo/deit3_sup_demo.py', dict(top1=41.0), backbone='vit_demo_patch8_64'))
    result = run_tool(empty, '--check-reproduction', '0.5')
    assert result.returncode == 0 and 'no measured cell' in result.stderr
    result = run_tool(runs, '--check-reproduction', '-1')
    assert result.returncode == 2 and 'tolerance' in result.stderr


def test_check_lines_and_beyond_agree():
    links = link_reported(build_table([]), load_paper_tables())
    assert links == [] and beyond(links, 0.0) == []
    assert check_lines(links, 0.5) == ['0 measured cells linked to paper rows; 0 beyond ±0.5']


# ---------------------------------------------------------------------------------------------- the paper links

def test_two_tables_citing_one_config_each_link_their_own_number(tmp_path):
    """Thesis Table 6.11 and "Three things" Table 6 print 67.1 and 68.0 for the same ViT-S iNat-18 transfer: a
    measured cell is set beside both, each with its table."""
    row = '{{model: {m}, variant: deit3_base_patch16_224, recipe: supervised, epochs: 400, config: ' + DEIT3_B_400 + \
        ', cls/imagenet: {v}}}'
    paper = tmp_path / 'paper.yaml'
    paper.write_text(f"tables:\n  - {{id: t1, source: S, rows: [{row.format(m='A', v=83.1)}]}}\n"
                     f"  - {{id: t2, source: S, rows: [{row.format(m='B', v=83.4)}]}}\n")
    write(tmp_path / 'runs', 'a', record(DEIT3_B_400, dict(top1=83.0)))
    links = link_reported(build_table([str(tmp_path / 'runs')]), load_paper_tables(str(paper)))
    assert sorted((link.sources[0][0], link.reported, round(link.delta, 6)) for link in links) == [
        ('t1', 83.1, -0.1), ('t2', 83.4, -0.4)]


def test_the_board_links_three_things_table6_and_thesis_table611_each_to_its_own_number(tmp_path):
    write(tmp_path, 'inat', dict(record('configs/transfer/inat2018_deit3_s.py', dict(top1=67.5),
                                        backbone='deit3_small_patch16_224', task='transfer'),
                                 dataset='inat2018', eval='full',
                                 protocol=config_protocol('configs/transfer/inat2018_deit3_s.py')))
    paper = load_paper_tables()
    resolve_linked(paper, config_protocol)
    links = link_reported(build_table([str(tmp_path)]), paper)
    assert sorted((link.source, link.reported) for link in links) == [
        ('deit3_transfer: DeiT III ViT-S (deit3_small_patch16_224)', 67.1),
        ('three_things_table6: ViT-S (deit3_small_patch16_224)', 68.0)]


def test_a_run_with_the_rows_cfg_options_links_to_its_row_and_a_run_without_does_not(tmp_path):
    """CaiT Table 3: the config without distillation (``run: {config, cfg_options}``) is the "@224" row, the config
    as written the "@224Υ" row; a run links by the options it recorded (result.json ``options``)."""
    cait = 'configs/pretrain/cait_xxs24_in1k_400e.py'
    no_kd = {'model.distillation': None, 'experiment.pretrain.recipe': 'supervised'}
    common = dict(backbone='cait_xxs24_224', epochs=400)
    write(tmp_path, 'plain', dict(record(cait, dict(top1=77.0), recipe='supervised', **common), options=no_kd))
    write(tmp_path, 'kd', record(cait, dict(top1=78.0), recipe='supervised_distilled', **common))
    # the recipe label alone would match the plain row: without the options the run is not its experiment
    write(tmp_path / 'other', 'relabelled', record(cait, dict(top1=76.0), recipe='supervised', **common))
    paper = load_paper_tables()
    links = {(link.row.recipe, link.reported) for link in link_reported(build_table([str(tmp_path)]), paper)
             if link.row.backbone == 'cait_xxs24_224'}
    assert links == {('supervised', 77.6), ('supervised_distilled', 78.4)}
    measured = build_table([str(tmp_path / 'other')])
    links, mismatches = match_reported(measured, paper)
    assert links == [] and len(mismatches) == 1
    assert 'its runs changed the config with no options, the paper row\'s with ' in mismatches[0].line()
    assert 'model.distillation=null' in mismatches[0].line()


def test_an_ablation_row_of_a_table_off_the_board_yaml_links_by_its_options_and_only_then_shows(tmp_path):
    """Thesis Table 6.3 (DeiT III ViT-B with RandAugment instead of 3-Augment: the recipe with the row's cfg_options,
    its label experiment.pretrain.recipe) is not named by board.yaml: a run made with the row's config and options
    links to the row, and the board then shows the table; the same config run without them links to nothing, and a
    board without such a run does not list the table's rows."""
    home = next(t for t in load_map() if t.key == 'thesis:6.3')
    row = next(r for r in home.rows if r.get('variant') == 'deit3_base_patch16_224' and r['note'] == 'RandAugment')
    run = row_runs(row)[0]
    label = run.cfg_options['experiment.pretrain.recipe']
    common = dict(backbone='deit3_base_patch16_224', recipe=label, epochs=400)
    write(tmp_path / 'with', 'ra', dict(record(run.config, dict(top1=82.5), **common), options=run.cfg_options))
    # the label alone (--cfg-options experiment.pretrain.recipe=...) on the 3-Augment recipe: not the row's run
    write(tmp_path / 'without', 'ra', dict(record(run.config, dict(top1=83.0), **common),
                                           options={'experiment.pretrain.recipe': label}))
    write(tmp_path / 'demo', 'demo', record('configs/demo/deit3_sup_demo.py', dict(top1=41.0),
                                            backbone='vit_demo_patch8_64', epochs=6))
    paper = load_paper_tables()
    table = next(t for t in paper if t.id == home.id)
    assert home.id == 'thesis_table6_3' and table.on_demand
    links = link_reported(build_table([str(tmp_path / 'with')]), paper)
    # Table 6.4 prints the same experiment (its RandAugment row) with the same number: one link names both
    assert [(link.reported, [t for t, _ in link.sources]) for link in links] == [
        (row['cls/imagenet'], ['thesis_table6_3', 'thesis_table6_4'])]
    links, mismatches = match_reported(build_table([str(tmp_path / 'without')]), paper)
    assert links == [] and 'train_dataloader.dataset.pipeline.3.type="RandAugment"' in mismatches[0].line()
    heading = '### Touvron, PhD thesis (2022), Table 6.3: '
    shown = {name: render('md', *measured_and_paper([str(tmp_path / name)])) for name in ('with', 'demo')}
    assert heading in shown['with'] and '82.5 (paper 82.7, Δ -0.2)' in shown['with']
    assert heading not in shown['demo'] and '### Touvron, PhD thesis (2022), Table 6.15' in shown['demo']


def test_runs_with_other_options_of_one_config_are_two_cells(tmp_path):
    """PatchConvNet-S60 with LayerNorm and with BatchNorm (thesis Tables 5.7 / 5.8: the row's options set
    model.backbone.norm=bn and the recipe label supervised:BatchNorm): two runs of one config, each a cell linked to
    its own rows; the BatchNorm run is its own board row (its recipe), never averaged with the LayerNorm one."""
    pcn = 'configs/pretrain/patchconvnet_s60_in1k.py'
    bn = {'model.backbone.norm': 'bn', 'experiment.backbone_overrides.norm': 'bn',
          'experiment.pretrain.recipe': 'supervised:BatchNorm'}
    write(tmp_path, 'ln', record(pcn, dict(top1=82.0), backbone='patchconvnet_s60', epochs=400))
    write(tmp_path, 'bn', dict(record(pcn, dict(top1=82.3), seed=1, backbone='patchconvnet_s60', epochs=400,
                                      recipe='supervised:BatchNorm (norm=bn)'), options=bn))
    measured = build_table([str(tmp_path)])
    assert sorted(len(r.stats) for r in measured.rows) == [1, 1], 'averaged across options'
    links = sorted((link.reported, tuple(table for table, _ in link.sources))
                   for link in link_reported(measured, load_paper_tables()))
    assert links == [(82.1, ('patchconvnet_table5_1', 'patchconvnet_table5_8', 'thesis_table5_7')),
                     (82.4, ('patchconvnet_table5_8', 'thesis_table5_7'))]  # board.yaml's tables first


def seg_record(config, miou, protocol, backbone='deit3_base_patch16_224', epochs=400, eval='ss'):
    """A seg run of ``config`` under ``protocol``: with the digest the config resolves it to when it is the
    config's own protocol (the run as shipped), else a made-up one."""
    rec = record(config, dict(mIoU=miou), backbone=backbone, epochs=epochs, task='seg', eval=eval)
    own = config_protocol(config)
    digest = own['digest'] if own and own['name'] == protocol else '0' * 12
    return dict(rec, dataset='ade20k', protocol=None if protocol is None else dict(name=protocol, digest=digest))


def test_a_cell_links_to_the_paper_only_under_the_paper_tables_protocol(tmp_path):
    """Thesis Table 6.12 is measured under upernet_xcit160k: the same config run under MAE's protocol (here
    recorded by an older run, or one with the protocol overridden) is listed as not compared, in every format."""
    root = tmp_path / 'runs'
    write(root, 'b', seg_record('configs/upernet_deit3_b.py', 48.7, 'upernet_xcit160k'))
    write(root, 's', seg_record('configs/upernet_deit3_s.py', 44.0, 'upernet_beit160k',
                                backbone='deit3_small_patch16_224'))
    write(root, 'l', seg_record('configs/upernet_deit3_l.py', 50.0, None, backbone='deit3_large_patch16_224'))
    table, paper = measured_and_paper([str(root)], config_protocol=config_protocol)
    links = link_reported(table, paper)
    assert [(link.row.backbone, link.reported) for link in links] == [('deit3_base_patch16_224', 49.3)]
    md = render('md', table, paper)
    assert '48.7 (paper 49.3, Δ -0.6)' in md and '44.0 (paper' not in md and '50.0 (paper' not in md
    assert ('| deit3_base_patch16_224 | supervised | 400 | ADE20k mIoU SS · upernet_xcit160k | 48.7 | 49.3 | -0.6 '
            '| '
            'deit3_ade20k: DeiT III ViT-B (deit3_base_patch16_224) | upernet_xcit160k |') in md
    assert ('- deit3_small_patch16_224 / supervised / 400 epochs, ADE20k mIoU SS · upernet_beit160k: measured under '
            'upernet_beit160k; '
            'deit3_ade20k: DeiT III ViT-S (deit3_small_patch16_224) under upernet_xcit160k: not compared') in md
    assert 'deit3_large_patch16_224 / supervised / 400 epochs, ADE20k mIoU SS: measured under no named protocol' in md
    rows = {r['backbone']: r for r in csv.DictReader(io.StringIO(render('csv', table, paper)))
            if r['section'] == 'measured'}
    assert rows['deit3_small_patch16_224']['ADE20k mIoU SS · upernet_beit160k reported'] == ''
    reported_in = rows['deit3_small_patch16_224']['ADE20k mIoU SS · upernet_beit160k reported in']
    assert 'under upernet_beit160k' in reported_in
    assert 'not compared' in render('html', table, paper)
    result = run_tool(root, '--check-reproduction', '1')
    assert result.returncode == 0 and '1 measured cells linked to paper rows; 0 beyond ±1' in result.stdout
    assert 'not compared: deit3_small_patch16_224' in result.stdout


def test_a_paper_tables_protocol_is_a_name_or_one_per_column_kind(tmp_path):
    bad = tmp_path / 'paper.yaml'
    bad.write_text('tables:\n  - {id: t, source: s, protocol: {seg: x, depth: y}, rows: [{model: M, seg/ade20k/ss: 1}]}\n')
    with pytest.raises(LeaderboardError, match="key 'protocol' is .* expected a protocol name"):
        load_paper_tables(str(bad))
    good = tmp_path / 'good.yaml'
    good.write_text('tables:\n  - {id: t, source: s, protocol: {transfer: tr, box: det}, rows: [{model: M, '
                    'transfer/cars: 1, box/coco: 2, cls/imagenet: 3}]}\n')
    from vitbench.results.paper import cell_protocol
    (table,) = load_paper_tables(str(good))
    row = table.rows[0]
    assert [cell_protocol(row, c) for c in (Column('transfer', 'cars'), Column('box', 'coco'), TOP1)] == ['tr', 'det', '']

