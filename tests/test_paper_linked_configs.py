"""The paper rows' links are data that must hold: every config a paper row links exists and trains the row's
model (variant, recipe label, epochs, as its run records them with the row's cfg_options and swapped backbone), a
↑R row links a fine-tune at R, and docs/leaderboard.md lists every linked config; malformed links name their
row. (How a measured cell links to a row: tests/test_leaderboard_reproduction.py.)"""
import copy
import functools
from pathlib import Path

import pytest
from mmengine.config import Config

from pretrain.export import pretraining_of
from vitbench.results.experiment import link_target, split_target
from vitbench.results.paper import PAPER_RESULTS, load_paper_tables
from vitbench.results.paper_map import load_map, row_runs
from vitbench.results.table import Column, LeaderboardError, config_name, recipe_label

REPO = Path(__file__).resolve().parents[1]
TOP1, V2, REAL = Column('cls', 'imagenet'), Column('cls', 'imagenet', 'v2'), Column('cls', 'imagenet', 'real')


LINKED = sorted({(config, row.variant, row.link_recipe, row.epochs, table.id)
                 for table in load_paper_tables() for row in table.rows for config in row.configs})  # with options


def test_the_papers_imagenet_tables_are_data():
    ids = {t.id for t in load_paper_tables()}
    assert ids >= {'deit3_table6_7', 'deit3_table6_15', 'three_things_table1', 'three_things_table2',
                   'three_things_table3', 'three_things_table5', 'three_things_table7', 'cait_table5',
                   'maelite_table1', 'maelite_table2', 'maelite_table3'}
    by_id = {t.id: t for t in load_paper_tables()}
    vit_h = next(r for r in by_id['deit3_table6_15'].rows if r.backbone.startswith('ViT-H') and r.epochs == 400)
    assert (vit_h.values[TOP1], vit_h.values[REAL], vit_h.values[V2]) == (84.8, 89.1, 75.3)
    m48 = next(r for r in by_id['cait_table5'].rows if r.backbone.startswith('CaiT-M48↑448Υ'))
    assert (m48.values[TOP1], m48.values[REAL], m48.values[V2]) == (86.5, 90.2, 76.9)
    ade = {r.backbone.split(' (')[0]: r.values for r in by_id['deit3_ade20k'].rows}
    assert ade['DeiT III ViT-B† @384'][Column('seg', 'ade20k', 'ss')] == 53.4
    assert ade['DeiT III ViT-L† @320'][Column('seg', 'ade20k', 'ms')] == 55.6
    assert len(LINKED) >= 40 and Path(PAPER_RESULTS).is_file()


RUNS = {(link_target(run.config, run.cfg_options), run.backbone): run
        for t in load_map() for row in t.rows for run in row_runs(row)}  # a target with a swapped backbone: its rows


@functools.lru_cache(maxsize=None)
def _parsed(config: str) -> Config:
    return Config.fromfile(str(REPO / config))  # many rows are one config with other options: parse each file once


def run_experiment(target: str, variant: str) -> dict:
    """The ``experiment`` a row's run records: its config with all its cfg_options (experiment.* included), and the
    backbone it swaps in (tools/train.py --backbone)."""
    run = RUNS.get((target, variant)) or RUNS.get((target, ''))
    cfg = copy.deepcopy(_parsed(split_target(target)[0]))
    cfg.merge_from_dict(run.cfg_options if run else split_target(target)[1])
    if run and run.backbone:
        cfg.merge_from_dict({'experiment.backbone': run.backbone})
    return cfg.experiment


@pytest.mark.parametrize('config, variant, recipe, epochs, table', LINKED, ids=lambda v: str(v))
def test_every_linked_config_exists_and_trains_the_rows_model(config, variant, recipe, epochs, table):
    path = split_target(config)[0]
    assert config_name(path) == path, f'{table}: write {path} as {config_name(path)}'
    assert (REPO / path).is_file(), f'{table} names {path}, which does not exist'
    experiment = run_experiment(config, variant)
    assert experiment['backbone'] == variant, f'{config} trains {experiment["backbone"]}, {table} says {variant}'
    if experiment['task'] == 'pretrain':  # a fine-tuning config's recipe and epochs are its checkpoint's
        # the label its records get: recipe, plus data other than ImageNet-1k and overrides that change the model
        label = recipe_label(dict(experiment['pretrain'], **pretraining_of(experiment)))
        assert (label, experiment['pretrain']['epochs']) == (recipe, epochs), config


LINKED_RES = sorted({(config, row.variant, row.res, table.id) for table in load_paper_tables() for row in table.rows
                     for config in row.configs})


@pytest.mark.parametrize('config, variant, res, table', LINKED_RES, ids=lambda v: str(v))
def test_every_linked_finetune_config_runs_at_the_rows_resolution(config, variant, res, table):
    """A ↑R row (img_size: R) links a fine-tune at R; a row without img_size one at the variant's own resolution."""
    from backbones.variants import VARIANTS
    experiment = run_experiment(config, variant)
    own = 224 if variant.startswith('timm:') else VARIANTS[variant]['kwargs']['img_size']  # the swapped timm models'
    img_size = (experiment.get('backbone_overrides') or {}).get('img_size', own)
    if experiment['task'] == 'finetune':
        assert str(img_size) == (res or str(own)), f'{config} fine-tunes at {img_size}, {table} says {res or own}'
    elif experiment['task'] == 'pretrain':  # a pre-training run's top-1 is never told apart by resolution
        assert res == '', f'{table}: img_size on a row that links the pre-training config {config}'
    # a downstream row's img_size is the resolution its backbone was fine-tuned at on ImageNet (thesis Table 6.12's
    # "pre-trained at 384"): tests/test_reproduction_audit.py follows the config's checkpoint to that fine-tune


def test_the_leaderboard_doc_lists_every_linked_config():
    """docs/leaderboard.md's "paper table → config → command" table names every config a row of board.yaml's tables
    links to (the map's other tables are rerun whole by tools/pipeline.py --table, docs/coverage.md)."""
    doc = (REPO / 'docs' / 'leaderboard.md').read_text()
    table = doc.split('Paper table → config → command')[1].split('\n## ')[0]
    on_board = {t.id for t in load_paper_tables() if not t.on_demand}
    missing = sorted({split_target(config)[0] for config, *_, table_id in LINKED
                      if table_id in on_board and f'`{split_target(config)[0]}`' not in table})
    assert not missing, f'docs/leaderboard.md table lacks {missing}'


@pytest.mark.parametrize('row, message', [
    ('{model: M, variant: deit3_base_patch16_224, epochs: 400, config: configs/pretrain/x.py, cls/imagenet: 1.0}',
     "needs 'recipe'"),
    ('{model: M, variant: v, recipe: supervised, config: configs/pretrain/x.py, cls/imagenet: 1.0}', "needs 'epochs'"),
    ('{model: M, variant: v, recipe: r, epochs: 1, config: pretrain/x.py, cls/imagenet: 1.0}', "key 'config'"),
    ('{model: M, variant: v, recipe: r, epochs: 1, config: [], cls/imagenet: 1.0}', "key 'config'"),
])
def test_malformed_links_name_the_row(tmp_path, row, message):
    bad = tmp_path / 'paper.yaml'
    bad.write_text(f'tables:\n  - {{id: t, source: S, rows: [{row}]}}\n')
    with pytest.raises(LeaderboardError, match=r"table 't' rows\[0\] \(M\)") as info:
        load_paper_tables(str(bad))
    assert message in str(info.value)


def test_two_rows_of_one_table_must_agree_on_one_experiment(tmp_path):
    row = '{{model: {m}, variant: v, recipe: r, epochs: 1, config: configs/a.py, cls/imagenet: {v}}}'
    bad = tmp_path / 'paper.yaml'
    rows = f"{row.format(m='A', v=80.0)}, {row.format(m='B', v=80.5)}"
    bad.write_text(f'tables:\n  - {{id: t1, source: S, rows: [{rows}]}}\n')
    with pytest.raises(LeaderboardError,
                       match=r"table 't1': configs/a.py .* row 'A \(v\)' reports 80.0, row 'B \(v\)' 80.5"):
        load_paper_tables(str(bad))


@pytest.mark.parametrize('path, name', [
    ('configs/pretrain/x.py', 'configs/pretrain/x.py'),
    ('/home/me/vitbench/configs/pretrain/x.py', 'configs/pretrain/x.py'),
    ('./configs/../configs/finetune/y.py', 'configs/finetune/y.py'),
    ('/tmp/my_config.py', '/tmp/my_config.py'),
    (None, ''),
])
def test_config_names_are_taken_from_the_configs_folder(path, name):
    assert config_name(path) == name
