"""The map of the papers (vitbench/results/papers/): docs/coverage.md and docs/coverage.json are what it renders,
every config a row names resolves (with its overrides, or its swapped backbone) and builds its model, and the map
refuses what would make a count lie."""
import copy
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

from vitbench.results.coverage import coverage, current, to_json, to_markdown, totals
from vitbench.results.paper import PAPER_RESULTS, load_paper_tables
from vitbench.results.experiment import link_target
from vitbench.results.paper_map import PAPERS, LeaderboardError, link_fields, link_targets, load_map, row_runs
from vitbench.yaml_file import read_yaml

REPO = Path(__file__).resolve().parents[1]
_ALL_RUNS = [run for table in load_map() for row in table.rows for run in row_runs(row)]
# each run, and each pre-training a run needs with its own cfg_options (an ablated pre-training a fine-tune continues)
RUNS = sorted({(run.config, json.dumps(run.cfg_options, sort_keys=True), run.backbone) for run in _ALL_RUNS}
              | {(run.needs, json.dumps(run.needs_options, sort_keys=True), '') for run in _ALL_RUNS
                 if run.needs_options})


def test_the_coverage_files_are_what_the_map_renders():
    entries = current()
    assert (REPO / 'docs/coverage.md').read_text(encoding='utf-8') == to_markdown(entries), \
        'docs/coverage.md is out of date: python tools/coverage.py'
    assert (REPO / 'docs/coverage.json').read_text(encoding='utf-8') == to_json(entries), \
        'docs/coverage.json is out of date: python tools/coverage.py'
    tables = json.loads(to_json(entries))['tables']
    assert {t['document'] for t in tables} == {'thesis', 'cait', 'three_things', 'maelite'}
    numbered = [t for t in tables if not t['table'].startswith('Figure')]
    assert len(numbered) == 75  # 58 thesis result tables (chapters 2-6), CaiT 5, "Three things" 7, MAE-lite 5
    assert all(t['state'] in ('whole', 'part', 'none', 'not_reproducible') for t in tables)
    assert all(t['why'] for t in tables if t['state'] != 'whole')
    assert all(t['rows'] >= t['recorded'] and t['rows'] >= t['quoted'] and t['runnable'] >= t['linked']
               for t in tables)
    result = subprocess.run([sys.executable, 'tools/coverage.py', '--check'], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_readme_states_the_totals():
    t = totals(current())['all']
    readme = (REPO / 'README.md').read_text(encoding='utf-8')
    assert (f"{t['tables']} numbered result tables" in readme and f"{t['tables_whole']} whole" in readme
            and f"{t['tables_part']} in part" in readme and f"{t['runnable']} runnable" in readme
            and f"{t['linked']} linked" in readme), 'README.md: update the coverage totals (docs/coverage.md)'


def test_the_board_shows_the_tables_board_yaml_names_from_their_home():
    """board.yaml's tables first, in its order, always shown; then every other table with a row that can link
    (each has an id: written, or auto_id's), shown only where a measured cell links to it."""
    ids = read_yaml(PAPER_RESULTS, ValueError)['board']
    tables = load_paper_tables()
    assert [t.id for t in tables[:len(ids)]] == ids and not any(t.on_demand for t in tables[:len(ids)])
    assert all(t.on_demand for t in tables[len(ids):])
    homes = {t.id: t for t in load_map() if t.id}
    assert set(homes) == {t.id for t in tables}
    for table in tables:
        assert table.title == homes[table.id].spec['source'] and len(table.rows) == len(homes[table.id].rows)
    linkable = {t.key for t in load_map() if not t.same_as and not t.number.startswith('Figure')
                and any(link_targets(r) for r in t.rows)}
    assert linkable == {t.key for t in homes.values() if any(link_targets(r) for r in t.rows)}
    assert homes['thesis_table6_2'].key == 'thesis:6.2' and homes['cait_table1'].key == 'cait:1'


def test_a_rows_link_names_one_experiment():
    """Two rows of a table that link one config with the same options, variant, recipe and epochs (and
    resolution) start from the same pre-training: else a fine-tune of two pre-trainings would be one cell (thesis
    Table 3.8's ↑384 rows after an SGD pre-training carry the label 'supervised:SGD' that the checkpoint passes on)."""
    for table in load_map():
        seen = {}
        for row in table.rows:
            if not link_targets(row):
                continue
            fields = link_fields(row)
            for run in row_runs(row):
                key = (link_target(run.config, run.cfg_options), run.backbone, fields['variant'], fields['recipe'],
                       fields['epochs'], row.get('img_size'))
                need = (run.needs, json.dumps(run.needs_options, sort_keys=True))
                assert seen.setdefault(key, need) == need, f"{table.key} {row['model']}: {key} after {seen[key]}"


def test_a_rows_recipe_must_agree_with_the_label_its_run_records(tmp_path):
    row = ('{model: M, variant: deit_tiny_patch16_224, recipe: supervised, epochs: 300, cls/imagenet: 72.0, '
           'run: {config: configs/pretrain/deit_tiny_in1k_300e.py, cfg_options: {experiment.pretrain.recipe: '
           '"supervised:x"}}}')
    folder = _write(tmp_path, cait=f'  - {{number: "1", title: T, rows: [{row}]}}\n')
    with pytest.raises(LeaderboardError, match="'recipe' is 'supervised' but its run records "
                                                "experiment.pretrain.recipe"):
        load_map(folder)


@functools.lru_cache(maxsize=None)
def _parsed(config: str) -> Config:
    # many rows are one config with other options (CaiT's ablations): parse each file once
    return Config.fromfile(str(REPO / config))


def _build(config: str, cfg_options: str, backbone: str):
    cfg = copy.deepcopy(_parsed(config))
    cfg.merge_from_dict(json.loads(cfg_options))
    distillation = (cfg.get('model') or {}).get('distillation')
    if distillation:  # the teacher is a released checkpoint the user provides (pretrain/teacher.py): the student builds
        assert distillation['teacher'].get('checkpoint'), f'{config}: a teacher without its checkpoint'
        cfg.model.distillation = None
    if backbone:
        from downstream.backbone_swap import swap_backbone
        swap_backbone(cfg, backbone)
    if cfg.get('custom_imports'):
        from mmengine.utils import import_modules_from_strings
        import_modules_from_strings(**cfg.custom_imports)
    scope = cfg.get('default_scope') or 'vitbench'
    if scope == 'mmseg':
        from mmseg.registry import MODELS
    elif scope == 'mmdet':
        from mmdet.registry import MODELS
    else:
        from vitbench.registry import MODELS
    model = cfg.model
    if model.get('teacher'):  # a distilling pre-training (MAE-lite's): its teacher is a checkpoint trained first
        assert model.teacher.get('checkpoint'), f'{config}: a teacher without its checkpoint'
        model = model.backbone  # the student builds
    if model.get('tokenizer'):  # BEiT's visual tokenizer is a file made first (tools/beit_tokenizer.py, or DALL-E's)
        assert model.tokenizer.get('checkpoint'), f'{config}: a tokenizer without its file'
        model = model.backbone  # tests/test_pretrain_beit.py builds the whole model with a fitted tokenizer
    key = json.dumps([scope, model.to_dict() if hasattr(model, 'to_dict') else model], sort_keys=True, default=str)
    if key not in _BUILT:  # rows that change only the data, the schedule or the teacher build one model
        with DefaultScope.overwrite_default_scope(scope), torch.device('meta'):
            _BUILT[key] = MODELS.build(model)
    return _BUILT[key]


_BUILT = {}


@pytest.mark.parametrize('config, cfg_options, backbone', RUNS, ids=lambda v: str(v))
def test_every_config_a_row_names_resolves_and_builds(config, cfg_options, backbone):
    import downstream  # noqa: F401  (registers the tasks' modules)
    model = _build(config, cfg_options, backbone)
    assert sum(p.numel() for p in model.parameters()) > 0


def _write(tmp_path, **tables):
    folder = tmp_path / 'papers'
    folder.mkdir()
    for document in ('thesis', 'cait', 'three_things', 'maelite'):
        (folder / f'{document}.yaml').write_text(
            f'document: {document}\ntables:\n' + tables.get(document, '  - {number: "1", title: T, n_rows: 2, '
                                                                      'why: not yet}\n'))
    return str(folder)


def test_the_state_follows_the_rows_and_a_table_has_one_home(tmp_path):
    row = '{model: M, cls/imagenet: 80.0, run: configs/pretrain/deit_tiny_in1k_300e.py}'
    whole = _write(tmp_path, cait=f'  - {{number: "1", title: T, rows: [{row}, {{model: Q, quoted: true}}]}}\n'
                                   '  - {number: "2", title: U, same_as: "cait:1"}\n')
    by_table = {(c.document, c.table): c for c in coverage(load_map(whole))}
    first = by_table['cait', '1']
    assert (first.state, first.runnable, first.quoted, first.recorded) == ('whole', 1, 1, 1)
    assert by_table['cait', '2'].state == 'whole' and by_table['thesis', '1'].state == 'none'
    (tmp_path / 'papers').rename(tmp_path / 'whole')
    part = _write(tmp_path, cait=f'  - {{number: "1", title: T, n_rows: 2, rows: [{row}]}}\n')
    with pytest.raises(LeaderboardError, match="state part: say 'why'"):
        coverage(load_map(part))
    (tmp_path / 'papers').rename(tmp_path / 'part')
    twice = _write(tmp_path, cait='  - {number: "1", title: T, state: not_reproducible, why: w}\n'
                                  '  - {number: "1", title: T2, n_rows: 1, why: w}\n')
    with pytest.raises(LeaderboardError, match='has two entries'):
        load_map(twice)
    (tmp_path / 'papers').rename(tmp_path / 'twice')
    written = _write(tmp_path, cait='  - {number: "1", title: T, state: whole, n_rows: 1}\n')
    with pytest.raises(LeaderboardError, match="only 'not_reproducible' is written"):
        load_map(written)


def test_the_papers_folder_is_the_home_of_the_board_file():
    assert Path(PAPER_RESULTS).parent == Path(PAPERS) and (Path(PAPERS) / 'thesis.yaml').is_file()


def test_a_setting_printed_twice_links_once_and_says_so():
    """Thesis Table 6.6 prints ViT-H-26x2 trained at 126 twice with two V2 numbers: the board links one row (two
    numbers for one run would contradict each other), the other runs the same run and its why says so."""
    table = next(t for t in load_map() if t.key == 'thesis:6.6')
    rows = [r for r in table.rows if r['model'] == 'ViT-H-26×2']
    assert len(rows) == 2 and row_runs(rows[0]) == row_runs(rows[1])
    assert link_targets(rows[0]) and not link_targets(rows[1])
    cov = next(c for c in current() if (c.document, c.table) == ('thesis', '6.6'))
    assert (cov.state, cov.runnable, cov.linked) == ('whole', 22, 21)
    assert cov.why == ('1 runnable row not linked: the same run as a row the board links (the table prints that '
                       'setting twice).')


def test_a_rows_teacher_is_a_config_whose_export_teaches(tmp_path):
    """``teacher`` names the config whose exported model is the distillation teacher (the form of ``needs``): a
    weights file there is refused in one line naming the row."""
    good = '{model: S, cls/imagenet: 80.0, run: configs/transfer/x.py, teacher: {config: configs/transfer/t.py}}'
    tables = load_map(_write(tmp_path, cait=f'  - {{number: "1", title: T, rows: [{good}]}}\n'))
    runs = row_runs(next(t for t in tables if t.key == 'cait:1').rows[0])
    assert [(r.config, r.teacher, r.teacher_options) for r in runs] == [('configs/transfer/x.py',
                                                                         'configs/transfer/t.py', {})]
    (tmp_path / 'papers').rename(tmp_path / 'good')
    bad = '{model: S, cls/imagenet: 80.0, run: configs/transfer/x.py, teacher: checkpoints/t.pth}'
    with pytest.raises(LeaderboardError, match=r"\(S\): \['checkpoints/t.pth'\] is not a path 'configs/"):
        load_map(_write(tmp_path, cait=f'  - {{number: "1", title: T, rows: [{bad}]}}\n'))
