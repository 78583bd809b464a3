"""Issue 35.6, numbers nobody checked: result.json values out of their range, every bad file named while the board
of the good ones is still written, names that matplotlib would read as mathtext or a spreadsheet as a formula, and a
result.json nested deeper than Python's recursion limit."""
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from vitbench.results.table import LeaderboardError, build_table, read_result

REPO = Path(__file__).resolve().parents[1]


def record(**changes):
    rec = dict(task='seg', dataset='ade20k', backbone='vit_demo_patch8_64', backbone_overrides={},
               pretrain=dict(recipe='mae', epochs=6, checkpoint=None), metrics=dict(mIoU=41.5), eval='ss',
               params_M=2.72, gflops=0.22, config='configs/demo/upernet_demo.py', git_commit='abc',
               created='2026-01-01T00:00:00+00:00')
    for key, value in changes.items():
        if key == 'pretrain':
            rec['pretrain'] = dict(rec['pretrain'], **value)
        else:
            rec[key] = value
    return rec


def write(root: Path, name: str, content) -> Path:
    path = root / name / 'result.json'
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def leaderboard(*args):
    return subprocess.run([sys.executable, 'tools/leaderboard.py', *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize('changes, message', [
    (dict(metrics=dict(mIoU=1e308)), "key 'metrics.mIoU' is 1e+308, expected a percentage in [0, 100]"),
    (dict(metrics=dict(mIoU=-5)), "key 'metrics.mIoU' is -5, expected a percentage in [0, 100]"),
    (dict(task='det', metrics=dict(bbox_mAP=101.0)), "key 'metrics.bbox_mAP' is 101.0, expected a percentage"),
    (dict(metrics=dict(mIoU=40.0, skipped_images=-1)), "key 'metrics.skipped_images' is -1, expected a whole number"),
    (dict(pretrain=dict(epochs=-40)), "key 'pretrain.epochs' is -40, expected a whole number >= 0 or null"),
    (dict(params_M=-2), "key 'params_M' is -2, expected a number >= 0 or null"),
])
def test_values_out_of_their_range_are_refused_naming_file_and_key(tmp_path, changes, message):
    path = write(tmp_path, 'bad', record(**changes))
    with pytest.raises(LeaderboardError) as info:
        read_result(str(path))
    assert str(info.value) == f'{path}: {message}' or str(info.value).startswith(f'{path}: {message}')


def test_a_result_json_nested_too_deeply_is_named_not_a_traceback(tmp_path):
    path = write(tmp_path, 'deep', '[' * 100_000 + ']' * 100_000)
    with pytest.raises(LeaderboardError, match='nested too deeply to be a result.json'):
        read_result(str(path))


def test_every_bad_file_is_named_and_the_board_of_the_good_ones_is_written(tmp_path):
    bad = [write(tmp_path, 'a', record(metrics=dict(mIoU=-5))), write(tmp_path, 'b', '{"task": "seg",')]
    write(tmp_path, 'good', record())
    out = tmp_path / 'board.md'
    result = leaderboard(tmp_path, '--out', out, '--no-paper')
    assert result.returncode == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith('error: ')]
    assert len(errors) == 2 and all(any(str(path) in line for line in errors) for path in bad)
    board = out.read_text()
    assert '41.5' in board and '## Result files left out' in board and str(bad[0]) in board
    assert len(build_table([str(tmp_path)]).rejected) == 2


def test_names_are_drawn_and_written_literally(tmp_path):
    """A recipe with mathtext in it stopped the HTML page inside matplotlib; a backbone-like name beginning with '='
    ran as a formula where the CSV was opened."""
    write(tmp_path, 'tex', record(pretrain=dict(recipe=r'$\undefinedmacro{x$')))
    write(tmp_path, 'formula', record(pretrain=dict(recipe='=HYPERLINK("http://x","y")'), metrics=dict(mIoU=40.0)))
    html = leaderboard(tmp_path, '--out', tmp_path / 'board.html', '--no-paper')
    assert html.returncode == 0, html.stderr[-2000:]
    assert r'$\undefinedmacro{x$' in (tmp_path / 'board.html').read_text()
    table = leaderboard(tmp_path, '--format', 'csv', '--no-paper')
    assert table.returncode == 0, table.stderr
    recipes = [row[2] for row in csv.reader(io.StringIO(table.stdout))][1:]
    assert '\'=HYPERLINK("http://x","y")' in recipes and r'$\undefinedmacro{x$' in recipes


def test_an_evaluation_counts_only_for_its_training_s_final_checkpoint(tmp_path):
    """Issue 46.1: an evaluation record (tools/test.py) of a checkpoint its training saved before its end is not a
    result of that experiment: in no row, named in the warnings. The evaluation of the final checkpoint is."""
    def evaluation(final, value):
        checkpoint = dict(path=f'/runs/seg/epoch_{2 if final else 1}.pth', sha256='0' * 64, final=final)
        return record(eval='ms', metrics=dict(mIoU=value), run=dict(kind='evaluation', id='e', checkpoint=checkpoint))
    write(tmp_path, 'seg', record(run=dict(kind='training', id='t')))
    write(tmp_path, 'seg/eval/epoch_1', evaluation(False, 5.2))
    table = build_table([str(tmp_path)])
    assert [(c.eval, v) for c, v in table.rows[0].values.items()] == [('ss', 41.5)]
    assert any('seg/eval/epoch_1/result.json: an evaluation of /runs/seg/epoch_1.pth, not the final checkpoint'
               in w for w in table.warnings)
    write(tmp_path, 'seg/eval/epoch_2', evaluation(True, 43.0))
    values = {c.eval: v for c, v in build_table([str(tmp_path)]).rows[0].values.items()}
    assert values == {'ss': 41.5, 'ms': 43.0}
