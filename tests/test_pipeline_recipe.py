"""A pipeline stage whose recipe changed since it ran (harness/pipeline/record.py) is not done, nor are the
stages built on it; it runs again from the start, even with --resume."""
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from _pipeline_helpers import DEMO, fake, run, toy_pipeline, write_pipeline
from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from _tool_helpers import FIXTURES, REPO
from harness.pipeline.record import RECORD_NAME, changes, is_done, write_record
from harness.pipeline.run import PipelineRunner
from harness.pipeline.spec import load_pipeline


def recorded_pair(tmp_path, seg_options=None, data_value=1.0):
    """Data, a pre-training on it and a segmentation built on that, the last two finished (result.json) under
    their recorded recipe."""
    pre, seg = tmp_path / 'pre.py', tmp_path / 'seg.py'
    for config, task in ((pre, 'pretrain'), (seg, 'seg')):
        if not config.exists():
            config.write_text(f"experiment = dict(task={task!r}, dataset='toy', backbone={DEMO!r})\nx = 1\n")
    path = write_pipeline(tmp_path, [
        fake('data', value=data_value),
        dict(name='pre', config=str(pre), depends_on=['data']),
        dict(name='seg', config=str(seg), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options=seg_options or {'a.b': 1}),
    ], backbones=[DEMO])
    return path


def finish(pipeline):
    for stage in [s for s in pipeline.stages if s.kind == 'train']:
        os.makedirs(stage.work_dir, exist_ok=True)
        Path(stage.work_dir, 'result.json').write_text('{}')
        write_record(pipeline, stage)


def test_a_stage_whose_recipe_changed_is_not_done_nor_are_the_stages_built_on_it(tmp_path):
    pipeline = load_pipeline(recorded_pair(tmp_path))
    finish(pipeline)
    pre, seg = (pipeline.stage(f'{DEMO}/{n}') for n in ('pre', 'seg'))
    assert is_done(pipeline, pre) and is_done(pipeline, seg)
    # a comment or a reformatting is no change: the record holds the config's values, not its text
    (tmp_path / 'pre.py').write_text((tmp_path / 'pre.py').read_text().replace('x = 1', 'x  =  1  # same'))
    pipeline = load_pipeline(recorded_pair(tmp_path))
    assert all(is_done(pipeline, s) for s in pipeline.stages if s.kind == 'train')
    # a value of a _base_ file changes the stage that inherits it, and the stage built on it
    base = tmp_path / 'schedule.py'
    base.write_text('epochs = 20\n')
    (tmp_path / 'pre.py').write_text(f"_base_ = [{str(base)!r}]\n" + (tmp_path / 'pre.py').read_text())
    finish(load_pipeline(recorded_pair(tmp_path)))
    base.write_text('epochs = 40\n')
    pipeline = load_pipeline(recorded_pair(tmp_path))
    pre, seg = (pipeline.stage(f'{DEMO}/{n}') for n in ('pre', 'seg'))
    assert changes(pipeline, pre) == [f'config {tmp_path / "pre.py"} changed']
    assert changes(pipeline, seg) == [f"'{DEMO}/pre' (a dependency) changed"]
    assert not is_done(pipeline, pre) and not is_done(pipeline, seg)
    plan = '\n'.join(PipelineRunner(pipeline, out=io.StringIO()).plan())
    assert f'{DEMO}/seg (train; to run again from the start: \'{DEMO}/pre\' (a dependency) changed)' in plan
    # a stage's own options change it alone
    finish(pipeline)
    pipeline = load_pipeline(recorded_pair(tmp_path, seg_options={'a.b': 2}))
    assert is_done(pipeline, pipeline.stage(f'{DEMO}/pre'))
    assert changes(pipeline, pipeline.stage(f'{DEMO}/seg')) == ['cfg_options changed']
    # what a command made is not tracked: its argv does not say (the demo data's names its worker count)
    finish(pipeline)
    pipeline = load_pipeline(recorded_pair(tmp_path, seg_options={'a.b': 2}, data_value=2.0))
    assert all(is_done(pipeline, s) for s in pipeline.stages if s.kind == 'train')
    # a folder with no record (run by hand, or before records existed) is judged by its result.json alone
    os.remove(os.path.join(pipeline.stage(f'{DEMO}/seg').work_dir, RECORD_NAME))
    assert is_done(pipeline, pipeline.stage(f'{DEMO}/seg'))


def test_a_config_holding_a_function_has_the_same_recipe_in_every_run(tmp_path):
    """A lazy-import config may hold classes or functions: the recipe names them, never by their address, which
    differs from process to process (else such a stage would run again every time)."""
    (tmp_path / 'pre.py').write_text(f"experiment = dict(task='pretrain', dataset='toy', backbone={DEMO!r})\n"
                                     'post = dict(fn=lambda x: x, type=dict)\n')
    path = recorded_pair(tmp_path)
    digest = ('from harness.pipeline.spec import load_pipeline; '
              f'print(load_pipeline({path!r}).stage({DEMO + "/pre"!r}).config_digest)')
    digests = {subprocess.run([sys.executable, '-c', digest], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout for _ in range(2)}
    assert len(digests) == 1 and len(digests.pop().strip()) == 64


def test_a_changed_training_runs_again_from_the_start_even_with_resume(tmp_path, monkeypatch):
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([str(FIXTURES), os.environ.get('PYTHONPATH', '')]))
    monkeypatch.setenv('OMP_NUM_THREADS', '1')
    _, results, out = run(toy_pipeline(tmp_path, max_iters=4))
    work_dir = tmp_path / DEMO / 'toy'
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert json.loads((work_dir / RECORD_NAME).read_text())['recipe']['cfg_options'] == {'train_cfg.max_iters': 4}
    _, results, out = run(toy_pipeline(tmp_path, max_iters=6), resume=True)
    assert results[f'{DEMO}/toy'].status == 'ran', out
    assert 'its recipe changed since it ran (cfg_options changed): it runs again from the start' in out
    log = (work_dir / 'pipeline.log').read_text().split('===')[-1]
    assert '--resume' not in log.splitlines()[0] and 'resumed' not in log  # not continued from iter 4 of the old
    assert json.loads((work_dir / 'result.json.stale').read_text())['task'] == 'pretrain'  # the old result, kept
    assert (work_dir / 'last_checkpoint').read_text().strip().endswith('iter_6.pth')
    _, results, _ = run(toy_pipeline(tmp_path, max_iters=6))
    assert results[f'{DEMO}/toy'].status == 'cached'
