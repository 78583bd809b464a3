"""Shared helpers of the pipeline tests (test_pipeline*.py, test_faults_pipeline.py, ...): a pipeline config of fake
stages written to a temporary folder, run in this process."""
import io
import runpy
import textwrap

import pytest

from _tool_helpers import FIXTURES, REPO
from harness.pipeline.run import PipelineRunner
from harness.pipeline.spec import load_pipeline

DEMO = 'vit_demo_patch8_64'

# A fake stage: writes a result.json like a real run (or fails), records that it ran, and can be slow.
FAKE_STAGE = textwrap.dedent('''\
    import json, os, sys, time
    work_dir, task, value = sys.argv[1], sys.argv[2], float(sys.argv[3])
    os.makedirs(work_dir, exist_ok=True)
    with open(os.path.join(work_dir, 'ran'), 'a') as f:
        f.write('x')
    print('Epoch(train) [1][1/1] loss: 0.5', flush=True)
    if task == 'fail':
        sys.exit('stage broke on purpose')
    if task == 'crash':  # as every training crashed on a GPU machine when CUDA state crossed a fork
        raise RuntimeError('Cannot re-initialize CUDA in forked subprocess')
    metric = dict(seg='mIoU', det='bbox_mAP', transfer='top1', pretrain='loss')[task]
    record = dict(task=task, dataset='toy', backbone='vit_demo_patch8_64', backbone_overrides={},
                  pretrain=dict(recipe='mae', epochs=1, checkpoint=None),
                  metrics={metric: value}, eval='ss', params_M=1.0, gflops=0.1, config='fake', git_commit=None,
                  created='2026-01-01T00:00:00+00:00')
    with open(os.path.join(work_dir, 'result.json'), 'w') as f:
        json.dump(record, f)
''')


@pytest.fixture(autouse=True)
def in_repo(monkeypatch):
    """Autouse in the test modules that import it."""
    monkeypatch.chdir(REPO)  # pipeline configs name configs/... and data/... from the repository root


def fake(name, task='seg', value=1.0, depends_on=(), **extra):
    return dict(name=name, kind='command', argv=['{root}/fake_stage.py', '{work_dir}', task, str(value)],
                creates='{work_dir}/result.json', depends_on=list(depends_on), **extra)


def write_pipeline(tmp_path, stages, **top):
    (tmp_path / 'fake_stage.py').write_text(FAKE_STAGE)
    path = tmp_path / 'pipeline.py'
    lines = [f'work_dir = {str(tmp_path)!r}', f'stages = {stages!r}'] + [f'{k} = {v!r}' for k, v in top.items()]
    path.write_text('\n'.join(lines) + '\n')
    return str(path)


def run(path, **kwargs):
    out = io.StringIO()
    runner = PipelineRunner(load_pipeline(path), out=out, **kwargs)
    results = {r.id: r for r in runner.run()}
    return runner, results, out.getvalue()


def ran_count(tmp_path, name):
    marker = tmp_path / name / 'ran'
    return len(marker.read_text()) if marker.exists() else 0


def toy_pipeline(tmp_path, max_iters=4):
    config = tmp_path / 'toy_experiment.py'
    config.write_text(f"_base_ = [{str(FIXTURES / 'toy_config.py')!r}]\n"
                      f"experiment = dict(task='pretrain', dataset='toy', backbone={DEMO!r})\n")
    return write_pipeline(tmp_path, [dict(name='toy', config=str(config), metric='loss',
                                          cfg_options={'train_cfg.max_iters': max_iters})],
                          backbones=[DEMO])


def pipeline_tool(*argv):
    """tools/pipeline.py's main, in this process."""
    return runpy.run_path(str(REPO / 'tools' / 'pipeline.py'))['main'](list(argv))
