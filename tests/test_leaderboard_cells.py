"""Issue 45: a leaderboard cell is one experiment. Runs of one config under two protocols, under another digest of
the same protocol, truncated, evaluated on a subset, or diverged never share the full runs' cell; a tracker's copy of
result.json is no run; a paper number stands only beside the protocol its linked config defines; the cross-task rank
refuses a board whose rows share too few test images. The result.json files are written by hand (one tiny real run
checks what a training records of its schedule)."""
import json

import numpy as np
from mmengine.dataset import BaseDataset

from _leaderboard_helpers import SEG_SS, record, run_tool, write
from _tool_helpers import FIXTURES, REPO
from _tool_helpers import run_tool as run_any_tool
from harness.experiment.eval_set import eval_set_of
from harness.experiment.linked_protocol import config_protocol
from vitbench.results import per_image
from vitbench.results.rank import MIN_SHARED, cross_task_rank
from vitbench.results.render import measured_and_paper, render
from vitbench.results.reproduction import match_reported
from vitbench.results.table import Column, build_table

DEIT3_B = 'configs/upernet_deit3_b.py'
ADE = Column('seg', 'ade20k')


def deit3_seg(miou, protocol, digest=None, seed=0, **extra):
    """A run of DeiT III ViT-B's UperNet config (thesis Table 6.12: 49.3 under upernet_xcit160k); ``digest`` None:
    the one the config resolves its own protocol to."""
    rec = record('seg', 'ade20k', dict(mIoU=miou), recipe='supervised', epochs=400)
    digest = digest or config_protocol(DEIT3_B)['digest']
    return dict(rec, backbone='deit3_base_patch16_224', config=DEIT3_B, seed=seed,
                protocol=dict(name=protocol, digest=digest), **extra)


def board(root):
    table, paper = measured_and_paper([str(root)], config_protocol=config_protocol)
    return table, paper, render('md', table, paper)


def test_two_protocols_are_two_cells_and_neither_links_to_the_others_paper_number(tmp_path):
    write(tmp_path, 'xcit', deit3_seg(48.7, 'upernet_xcit160k'))
    write(tmp_path, 'beit', deit3_seg(52.1, 'upernet_beit160k', digest='b' * 12, seed=1))
    table, paper, md = board(tmp_path)
    (row,) = table.rows
    xcit, beit = Column('seg', 'ade20k', protocol='upernet_xcit160k'), Column('seg', 'ade20k',
                                                                               protocol='upernet_beit160k')
    assert set(row.values) == {xcit, beit} and row.values[xcit] == 48.7 and row.values[beit] == 52.1
    assert '50.4' not in md and 'n=2' not in md  # never averaged
    assert '| ADE20k mIoU SS · upernet_beit160k | ADE20k mIoU SS · upernet_xcit160k |' in md
    links, mismatches = match_reported(table, paper)
    assert [(link.column, link.reported) for link in links] == [(xcit, 49.3)]
    assert '48.7 (paper 49.3, Δ -0.6)' in md and '52.1 (paper' not in md
    assert [m.column for m in mismatches] == [beit]
    assert ('ADE20k mIoU SS: 2 experiments, not averaged (protocol upernet_beit160k vs upernet_xcit160k)'
            in md.split('## Cells split by experiment')[1])


def test_the_same_protocol_name_with_another_digest_links_to_nothing_and_says_so(tmp_path):
    write(tmp_path, 'short', deit3_seg(30.2, 'upernet_xcit160k', digest='c' * 12))
    table, paper, md = board(tmp_path)
    links, (mismatch,) = match_reported(table, paper)
    assert not links and '30.2 (paper' not in md
    expected = config_protocol(DEIT3_B)['digest']
    assert (f"its runs recorded upernet_xcit160k #{'c' * 12} and {DEIT3_B} resolves it to #{expected}: other "
            'settings: not compared') in mismatch.line()
    assert mismatch.line() in md
    # without the configs read (a caller that passes no reader), nothing under a protocol links either
    unresolved = render('md', table, measured_and_paper([str(tmp_path)])[1])
    assert '30.2 (paper' not in unresolved and 'is not known' in unresolved


def test_subset_truncated_and_diverged_runs_stay_out_of_the_full_runs_cell(tmp_path):
    full = dict(images=2000, ids_sha256='f' * 16, subset=False)
    schedule = dict(unit='iter', run=160000, configured=160000)
    for seed, miou in ((0, 48.7), (1, 49.1)):
        write(tmp_path, f'full{seed}', deit3_seg(miou, 'upernet_xcit160k', seed=seed, eval_set=full,
                                                 schedule=schedule))
    write(tmp_path, 'subset', deit3_seg(53.0, 'upernet_xcit160k', seed=2, schedule=schedule,
                                        eval_set=dict(images=100, ids_sha256='a' * 16, subset=True)))
    write(tmp_path, 'truncated', deit3_seg(12.0, 'upernet_xcit160k', seed=3, eval_set=full,
                                           schedule=dict(unit='iter', run=8, configured=160000)))
    diverged = dict(deit3_seg(0, 'upernet_xcit160k', seed=4), metrics={}, status='diverged',
                    diverged=dict(iteration=10, loss='nan', last_finite_iteration=9, last_finite_loss=2.31),
                    cost=dict(wall_s=5.0, device_hours=0.0014))
    write(tmp_path, 'diverged', diverged)
    table, paper, md = board(tmp_path)
    (row,) = table.rows
    assert len(row.runs) == 4 and not any('diverged' in p for p in row.runs)  # the diverged run is in no row
    by_setting = {c.setting: row.stats[c] for c in row.values}
    assert {k: (round(s.mean, 2), s.n) for k, s in by_setting.items()} == {
        '160000 iters, 2000 images': (48.9, 2), '160000 iters, 100 images': (53.0, 1),
        '8 of 160000 iters, 2000 images': (12.0, 1)}
    links, mismatches = match_reported(table, paper)
    assert [round(link.measured.mean, 6) for link in links] == [48.9]  # only the full runs stand beside the paper
    assert sorted(m.why for m in mismatches) == ['evaluated on a subset (100 images)', 'trained 8 of 160000 iters']
    failed = md.split('## Failed and diverged runs (in no row)')[1]
    assert ('deit3_base_patch16_224 / supervised / 400 epochs, seg on ade20k: diverged at iteration 10 (loss nan; '
            'last finite 2.31 at 9)') in failed
    assert '| diverged |' not in md


def test_a_conflict_shows_both_values_and_the_rule_in_the_cell(tmp_path):
    write(tmp_path, 'a', record('seg', 'ade20k-demo', dict(mIoU=28.25)))
    write(tmp_path, 'b', record('seg', 'ade20k-demo', dict(mIoU=29.75), created='2026-02-01T00:00:00+00:00'))
    md = render('md', build_table([str(tmp_path)]), [])
    assert '| 29.8 (conflict: newest of 29.8, 28.2) |' in md


def test_a_trackers_copy_of_result_json_is_not_a_run(tmp_path):
    rec = record('seg', 'ade20k-demo', dict(mIoU=30.0))
    write(tmp_path, 'run', rec)
    write(tmp_path, 'run/20260101_000000/vis_data/artifacts', rec)  # MLflow's copy
    table = build_table([str(tmp_path)])
    assert [len(r.runs) for r in table.rows] == [1]
    result = run_tool(tmp_path, '--no-paper')
    assert result.returncode == 0 and '1 runs (result.json)' in result.stdout


def _with_evidence(root, name, recipe, ids, correct):
    path = write(root, name, dict(record('transfer', 'cifar10', dict(top1=100.0 * np.mean(correct)), recipe=recipe),
                                  per_image=['top1']))
    per_image.write(str(path.parent), dict(top1=dict(kind=np.array('accuracy'), ids=np.array(ids),
                                                     correct=np.array(correct))))


def test_the_rank_refuses_a_board_whose_rows_share_too_few_test_images(tmp_path):
    rng = np.random.default_rng(0)
    full = [f'img/{i}.png' for i in range(100)]
    _with_evidence(tmp_path, 'sup', 'supervised', full, rng.random(100) < 0.8)
    _with_evidence(tmp_path, 'mae', 'mae', full, rng.random(100) < 0.7)
    ranked = cross_task_rank(build_table([str(tmp_path)]))
    assert not ranked.refused and len(ranked.ranked) == 2
    _with_evidence(tmp_path, 'scratch', 'scratch', full[:8], rng.random(8) < 0.5)  # a subset: 8 shared images
    table = build_table([str(tmp_path)])
    ranking = cross_task_rank(table)
    assert not ranking.ranked and 'share 8 of their 8-100 test images' in ranking.refused
    assert MIN_SHARED == 0.9
    md = render('md', table, [])
    rank = md.split('## Cross-task rank')[1]
    assert rank.lstrip().startswith('Not ranked: the runs of CIFAR-10 top-1') and '| rank |' not in rank
    csv = render('csv', table, [])
    assert csv.count('not ranked: the runs of CIFAR-10 top-1 share 8') == 3


class _Images(BaseDataset):
    """mmengine's dataset over named images, as the suite's datasets are (indices cut it to a subset)."""

    def load_data_list(self):
        return [dict(img_path=f'/data/ade/images/validation/ADE_val_{i:08d}.jpg') for i in range(20)]


def test_the_evaluation_set_fingerprint_tells_a_subset_from_the_full_set(tmp_path):
    full, subset = eval_set_of(_Images(serialize_data=True)), eval_set_of(_Images(indices=10))
    assert full['images'] == 20 and not full['subset'] and subset['images'] == 10 and subset['subset']
    assert full['ids_sha256'] != subset['ids_sha256']
    elsewhere = _Images(data_root='/other')  # the same images under another data root: the same set
    assert eval_set_of(elsewhere) == full


def test_a_training_records_its_schedule_as_run(tmp_path, monkeypatch):
    """One tiny real run (the toy task, 4 iterations): result.json records the schedule it ran."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    config = tmp_path / 'toy.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_random_config.py')!r}]\n"
                      "experiment = dict(task='transfer', dataset='cifar10', backbone='vit_demo_patch8_64')\n")
    result = run_any_tool('tools/train.py', config, '--work-dir', tmp_path / 'run', '--cfg-options',
                          'train_cfg.max_iters=4')
    assert result.returncode == 0, result.stderr[-2000:]
    written = json.loads((tmp_path / 'run' / 'result.json').read_text())
    assert written['schedule'] == dict(unit='iter', run=4, configured=4)
    assert 'eval_set' in written  # the toy dataset lists no images: null


def test_pre_trainings_of_other_lengths_share_the_imagenet_column(tmp_path):
    """A pre-training's schedule is its row's epochs: rows of 6 and 10 epochs fill one column, as before."""
    for epochs in (6, 10):
        write(tmp_path, f'sup{epochs}', dict(record('pretrain', 'imagenet', dict(top1=60.0 + epochs),
                                                    recipe='supervised', epochs=epochs),
                                             schedule=dict(unit='epoch', run=epochs, configured=epochs)))
    table = build_table([str(tmp_path)])
    assert table.columns == [Column('cls', 'imagenet')] and not table.splits
