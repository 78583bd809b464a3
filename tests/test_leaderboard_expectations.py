"""Expected orderings (vitbench/results/expectations.py): checked on the paired Δ of hand-written results,
and, in a pipeline, a failed ordering fails the leaderboard stage after writing the leaderboard."""
import json
from pathlib import Path

import pytest

from harness.pipeline.spec import PipelineError, load_pipeline
from vitbench.results.expectations import check_expectations, expectations_from
from vitbench.results.table import LeaderboardError, build_table

SEG = 'ADE20k-demo mIoU SS'
FLOWERS = 'Flowers-102 top-1'
SCRATCH = dict(seg=[20.0, 25.0, 30.0], flowers=[10.0, 12.0, 11.0])
SUPERVISED = dict(seg=[21.0, 26.2, 30.9], flowers=[10.5, 11.0, 11.0])  # seg: +1.03 on average; flowers: -0.17


def result(task, dataset, metrics, recipe, seed):
    pretrain = dict(recipe=recipe, epochs=0 if recipe == 'scratch' else 6, checkpoint=None)
    return dict(task=task, dataset=dataset, backbone='vit_demo_patch8_64', eval='ss', metrics=metrics,
                pretrain=pretrain, seed=seed, created='2026-01-01T00:00:00+00:00')


@pytest.fixture
def runs(tmp_path) -> Path:
    for recipe, values in (('supervised', SUPERVISED), ('scratch', SCRATCH)):
        for seed in range(3):
            for task, dataset, metric, key in (('seg', 'ade20k-demo', 'mIoU', 'seg'),
                                               ('transfer', 'flowers102', 'top1', 'flowers')):
                folder = tmp_path / recipe / f'{dataset}{seed}'
                folder.mkdir(parents=True)
                (folder / 'result.json').write_text(
                    json.dumps(result(task, dataset, {metric: values[key][seed]}, recipe, seed)))
    return tmp_path


def expect(**min_delta):
    return expectations_from([dict(row='supervised', over='scratch', min_delta=min_delta)], 'test')


def test_an_ordering_holds_where_the_mean_paired_delta_reaches_its_threshold(runs):
    table = build_table([str(runs)])
    (seg,) = check_expectations(table, expect(**{SEG: 1.0}))
    assert seg.holds and seg.delta.n == 3 and seg.delta.mean == pytest.approx(3.1 / 3)
    assert seg.line.startswith(f'ok: supervised - scratch >= +1 on {SEG} (vit_demo_patch8_64): measured +1.03 (n=3')
    (too_much,) = check_expectations(table, expect(**{SEG: 1.1}))
    assert not too_much.holds and too_much.line.startswith('FAILED')
    (flowers,) = check_expectations(table, expect(**{FLOWERS: 0.0}))  # behind scratch: not even Δ >= 0
    assert not flowers.holds and flowers.delta.mean == pytest.approx(-0.5 / 3)


def test_a_missing_run_fails_the_ordering_rather_than_passing_it(runs):
    for seed in range(3):
        (runs / 'supervised' / f'flowers102{seed}' / 'result.json').unlink()
    table = build_table([str(runs)])
    (outcome,) = check_expectations(table, expect(**{FLOWERS: 0.0}))
    assert not outcome.holds and 'no paired value' in outcome.line


def test_a_column_or_recipe_the_table_lacks_is_an_error_not_a_pass(runs):
    table = build_table([str(runs)])
    with pytest.raises(LeaderboardError, match=r"no column \['Flowers top-1'\] in the table \(its columns: "):
        check_expectations(table, expect(**{'Flowers top-1': 0.0}))
    with pytest.raises(LeaderboardError, match="no row has the recipe 'mae'"):
        check_expectations(table, expectations_from([dict(row='mae', over='scratch', min_delta={SEG: 0})], 't'))


@pytest.mark.parametrize('spec, message', [
    ('supervised', "key 'expect' is 'supervised', expected a list of"),
    ([dict(row='supervised', over='scratch')], 'expected a dict with exactly the keys row, over, min_delta'),
    ([dict(row='supervised', over='', min_delta={SEG: 1})], 'row and over must be recipe labels'),
    ([dict(row='supervised', over='scratch', min_delta={SEG: '1'})], 'expected a non-empty mapping of column'),
])
def test_malformed_expectations_name_the_stage_and_key(tmp_path, spec, message):
    path = tmp_path / 'p.py'
    path.write_text(f"work_dir = '{tmp_path}/w'\nstages = [dict(name='board', kind='leaderboard', runs=['x'], "
                    f"expect={spec!r})]\n")
    with pytest.raises(PipelineError, match=message):
        load_pipeline(str(path))


def test_an_ordering_whose_row_a_backbone_family_cannot_run_is_not_checked_and_says_so(runs, tmp_path):
    """With --backbones patchconvnet_demo_64 the demo leaves out its MAE stages (families=['vit']): the MAE
    ordering has no row, which is no broken promise; the others are still checked."""
    import io
    from harness.pipeline.run import PipelineRunner
    orderings = [dict(row='supervised', over='scratch', min_delta={SEG: 1.0}),
                 dict(row='mae', over='scratch', min_delta={SEG: 2.0})]
    path = tmp_path / 'p.py'
    path.write_text(f"work_dir = '{tmp_path}/w'\nbackbones = ['patchconvnet_demo_64']\nstages = ["
                    "dict(name='mae', config='configs/demo/mae_demo.py', families=['vit']), "
                    f"dict(name='board', kind='leaderboard', runs=[{str(runs)!r}], formats=['md'], "
                    f"expect={orderings!r})]\n")
    pipeline = load_pipeline(str(path))
    assert pipeline.left_out
    out = io.StringIO()
    [board] = PipelineRunner(pipeline, out=out).run()
    assert board.status == 'ran', out.getvalue()
    assert "expected ordering mae > scratch not checked: no 'mae' row" in out.getvalue()
    assert 'ok: supervised - scratch >= +1 on ADE20k-demo mIoU SS' in out.getvalue()
    assert '1 expected orderings hold' in out.getvalue()
