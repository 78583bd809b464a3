"""Pipeline seeds: each train / test stage runs once per seed on the same seed's dependencies, one seed keeps
the layout, seeds='shared' runs once; bad seeds are refused in one line naming the file, key or option."""
import pytest

from _pipeline_helpers import DEMO, fake, pipeline_tool, write_pipeline
from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from harness.pipeline.command import command_of
from harness.pipeline.run import PipelineRunner
from harness.pipeline.spec import PipelineError, load_pipeline


def seeded_pipeline(tmp_path, **top):
    """pre-training -> segmentation -> its multi-scale test, a teacher trained once and a student of it."""
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='ade20k', backbone={DEMO!r})\n")
    return write_pipeline(tmp_path, [
        fake('data'),
        dict(name='pre', config=str(config), depends_on=['data'], outputs=['backbone.pth']),
        dict(name='seg', config=str(config), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options={'a.b': 1}),
        dict(name='seg_ms', kind='test', config=str(config), depends_on=['seg'], weights='{seg.last_checkpoint}'),
        dict(name='teacher', config=str(config), per_backbone=False, seeds='shared'),
        dict(name='student', config=str(config), depends_on=['teacher'],
             cfg_options={'model.teacher.checkpoint': '{teacher}/backbone.pth', 'randomness.seed': 7}),
        dict(name='leaderboard', kind='leaderboard', depends_on=['seg_ms', 'student']),
    ], backbones=[DEMO], **top)


def cfg_options(argv):
    return argv[argv.index('--cfg-options') + 1:] if '--cfg-options' in argv else []


def test_seeds_run_each_train_and_test_stage_once_per_seed_on_the_same_seeds_dependencies(tmp_path):
    pipeline = load_pipeline(seeded_pipeline(tmp_path, seeds=[0, 1]))
    assert pipeline.seeds == [0, 1]
    per_seed = [f'{DEMO}/{name}/seed{k}' for name in ('pre', 'seg', 'seg_ms') for k in (0, 1)]
    students = [f'{DEMO}/student/seed{k}' for k in (0, 1)]
    assert [s.id for s in pipeline.stages] == ['data', *per_seed, 'teacher', *students, 'leaderboard']
    seg = pipeline.stage(f'{DEMO}/seg/seed1')
    assert seg.seed == 1 and seg.work_dir == str(tmp_path / DEMO / 'seg' / 'seed1')
    assert seg.deps == [f'{DEMO}/pre/seed1'] and pipeline.stage(f'{DEMO}/pre/seed0').deps == ['data']
    argv = command_of(pipeline, seg)
    assert argv[argv.index('--checkpoint') + 1] == str(tmp_path / DEMO / 'pre' / 'seed1' / 'backbone.pth')
    assert cfg_options(argv) == ['a.b=1', 'randomness.seed=1']  # merged with the stage's own
    assert cfg_options(command_of(pipeline, pipeline.stage(f'{DEMO}/pre/seed0'))) == ['randomness.seed=0']
    assert not any('randomness' in a for a in command_of(pipeline, pipeline.stage('data')))  # commands: unseeded
    # {seg.last_checkpoint} of seed 1's test: seed 1's training
    seg_dir = tmp_path / DEMO / 'seg' / 'seed1'
    seg_dir.mkdir(parents=True)
    (seg_dir / 'last_checkpoint').write_text(str(seg_dir / 'iter_9.pth'))
    argv = command_of(pipeline, pipeline.stage(f'{DEMO}/seg_ms/seed1'))
    assert argv[3] == str(seg_dir / 'iter_9.pth') and cfg_options(argv) == ['randomness.seed=1']
    # seeds='shared': trained once with the first seed, in the usual folder; every seed's student uses it
    teacher = pipeline.stage('teacher')
    assert teacher.seed == 0 and teacher.work_dir == str(tmp_path / 'teacher')
    assert cfg_options(command_of(pipeline, teacher)) == ['randomness.seed=0']
    student = pipeline.stage(f'{DEMO}/student/seed1')
    assert student.deps == ['teacher']
    assert cfg_options(command_of(pipeline, student)) == [  # the pipeline's seed wins over the stage's own
        f"model.teacher.checkpoint={tmp_path / 'teacher' / 'backbone.pth'}", 'randomness.seed=1']
    # the leaderboard waits for, and tabulates, every seed
    board = pipeline.stage('leaderboard')
    assert board.deps == [f'{DEMO}/seg_ms/seed0', f'{DEMO}/seg_ms/seed1', *students]
    assert PipelineRunner(pipeline).leaderboard_runs(board, existing=False) == [
        str(tmp_path / DEMO / name / f'seed{k}') for name in ('seg_ms', 'student') for k in (0, 1)]


def test_one_seed_keeps_the_layout_and_no_seeds_add_nothing(tmp_path):
    path = seeded_pipeline(tmp_path)
    plain, one = load_pipeline(path), load_pipeline(path, seeds=[3])
    assert [s.id for s in one.stages] == [s.id for s in plain.stages]
    assert [s.work_dir for s in one.stages] == [s.work_dir for s in plain.stages]
    assert f'{DEMO}/seg' in plain.stage(f'{DEMO}/seg_ms').deps and plain.seeds == []
    seg, seg_one = plain.stage(f'{DEMO}/seg'), one.stage(f'{DEMO}/seg')
    assert seg.seed is None and cfg_options(command_of(plain, seg)) == ['a.b=1']
    assert seg_one.seed == 3 and cfg_options(command_of(one, seg_one)) == ['a.b=1', 'randomness.seed=3']


def test_tool_seeds_replace_the_configs_and_dry_run_shows_the_seeded_stages(tmp_path, capsys):
    path = seeded_pipeline(tmp_path, seeds=[0, 1])
    assert pipeline_tool(path, '--seeds', '4,5', '--baseline', 'mae', '--dry-run') == 0
    plan = capsys.readouterr().out
    assert f'{DEMO}/seg/seed5 (train; to run) after: {DEMO}/pre/seed5' in plan and 'randomness.seed=5' in plan
    assert 'seed0' not in plan and '(baseline: mae)' in plan


@pytest.mark.parametrize('argv, message', [
    (['--seeds', '0,a'], "--seeds '0,a': expected whole numbers separated by commas, or ranges A-B, e.g. 0,1,2 "
                         "or 1-100"),
    (['--seeds', '1-3,2'], '--seeds is [1, 2, 3, 2]: seed 2 is given twice'),  # a range is expanded
    (['--seeds', ''], '--seeds is [], expected a non-empty list of whole numbers'),
    (['--seeds', '1,2,1'], '--seeds is [1, 2, 1]: seed 1 is given twice'),
])
def test_tool_rejects_bad_seeds_in_one_line(tmp_path, capsys, argv, message):
    assert pipeline_tool(seeded_pipeline(tmp_path), *argv, '--dry-run') == 2
    err = capsys.readouterr().err
    assert err.startswith(f'error: {message}') and err.count('\n') == 1


@pytest.mark.parametrize('seeds, message', [
    ([], "key 'seeds' is [], expected a non-empty list of whole numbers"),
    ([0, 0], "key 'seeds' is [0, 0]: seed 0 is given twice"),
    (['0', 1], "key 'seeds' is ['0', 1], expected a non-empty list of whole numbers"),
    (3, "key 'seeds' is 3, expected a non-empty list of whole numbers"),
    ([-1], "key 'seeds' is [-1], expected a non-empty list of whole numbers from 0 to 2**32 - 1"),
])
def test_bad_seeds_in_the_config_name_the_file_and_key(tmp_path, seeds, message):
    path = seeded_pipeline(tmp_path, seeds=seeds)
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert str(info.value).startswith(f'{path}: {message}')


@pytest.mark.parametrize('stages, message', [
    ([dict(name='a', config='configs/demo/upernet_demo.py', seeds='each')], "stage 'a': key 'seeds' is 'each', "
     "expected 'shared'"),
    ([dict(fake('a'), seeds='shared')], "unknown key(s) ['seeds'] for a command stage"),
    ([dict(name='a', config='configs/demo/upernet_demo.py'),
      dict(fake('b', depends_on=['a']), argv=['{a}/x'], per_backbone=True)],
     "stage 'b': runs once for all seeds (a command or leaderboard stage, or seeds='shared') but refers to {a}, "
     "which runs once per seed; give 'a' seeds='shared' to run it once"),
    ([dict(name='lb', kind='leaderboard', baseline=['scratch'])], "key 'baseline' is ['scratch'], expected the name"),
    ([dict(name='lb', kind='leaderboard', intervals='below')], "key 'intervals' is 'below', expected 'line'"),
])
def test_bad_seed_and_baseline_keys_name_the_stage(tmp_path, stages, message):
    path = write_pipeline(tmp_path, stages, backbones=[DEMO], seeds=[0, 1])
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert message in str(info.value) and path in str(info.value)
