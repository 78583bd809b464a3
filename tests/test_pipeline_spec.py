"""A pipeline config is checked before anything runs (harness/pipeline/spec.py): a bad one is refused naming
the file, the stage and the key; a checked one gives each stage its command (harness/pipeline/command.py)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from _pipeline_helpers import DEMO, fake, write_pipeline
from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from _tool_helpers import REPO
from harness.pipeline.command import command_of
from harness.pipeline.spec import PipelineError, load_pipeline


def test_commands_pass_dependency_outputs_swaps_and_options(tmp_path):
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='ade20k', backbone={DEMO!r})\n")
    path = write_pipeline(tmp_path, [
        dict(name='pre', config=str(config)),
        dict(name='seg', config=str(config), depends_on=['pre'], checkpoint='{pre}/backbone.pth',
             cfg_options={'a.b': 1, 'c': [1, 2], 'd': None, 'e': 'x_{backbone}'}, args=['--amp']),
        dict(name='seg_ms', kind='test', config=str(config), depends_on=['pre', 'seg'],
             weights='{seg.last_checkpoint}', tta=True, checkpoint='{pre}/backbone.pth'),
    ], backbones=[DEMO, 'deit3_small_patch16_224'])
    pipeline = load_pipeline(path)
    assert [s.id for s in pipeline.stages] == [f'{b}/{n}' for n in ('pre', 'seg', 'seg_ms')
                                               for b in (DEMO, 'deit3_small_patch16_224')]
    seg = pipeline.stage('deit3_small_patch16_224/seg')
    argv = command_of(pipeline, seg)
    assert argv[:3] == [sys.executable, str(REPO / 'tools' / 'train.py'), str(config)]
    pre_dir = os.path.join(str(tmp_path), 'deit3_small_patch16_224', 'pre')
    assert argv[argv.index('--work-dir') + 1] == os.path.join(str(tmp_path), 'deit3_small_patch16_224', 'seg')
    assert argv[argv.index('--checkpoint') + 1] == os.path.join(pre_dir, 'backbone.pth')
    assert argv[argv.index('--backbone') + 1] == 'deit3_small_patch16_224'  # the config is for the demo ViT
    assert '--amp' in argv
    assert argv[argv.index('--cfg-options') + 1:] == ['a.b=1', 'c=[1,2]', 'd=None', 'e=x_deit3_small_patch16_224']
    assert '--backbone' not in command_of(pipeline, pipeline.stage(f'{DEMO}/seg'))  # the config's own backbone
    test = pipeline.stage(f'{DEMO}/seg_ms')
    with pytest.raises(PipelineError, match='left no checkpoint'):
        command_of(pipeline, test)
    seg_dir = Path(pipeline.stage(f'{DEMO}/seg').work_dir)
    seg_dir.mkdir(parents=True)
    (seg_dir / 'last_checkpoint').write_text(str(seg_dir / 'iter_9.pth'))
    argv = command_of(pipeline, test)
    assert argv[1].endswith('tools/test.py') and argv[3] == str(seg_dir / 'iter_9.pth') and '--tta' in argv
    assert f"experiment.checkpoint={os.path.join(str(tmp_path), DEMO, 'pre', 'backbone.pth')}" in argv
    pipeline.launcher = ['torchrun', '--nproc_per_node', '8']
    argv = command_of(pipeline, seg)
    assert argv[:4] == ['torchrun', '--nproc_per_node', '8', str(REPO / 'tools' / 'train.py')]
    assert argv[argv.index('--launcher') + 1] == 'pytorch'


@pytest.mark.parametrize('stages, message', [
    ([fake('a', depends_on=['b']), fake('b', depends_on=['a'])], 'cycle: a -> b -> a'),
    ([fake('a', depends_on=['nope'])], "depends_on names 'nope'"),
    ([fake('a'), fake('a')], "two stages are named 'a'"),
    ([fake('a'), dict(fake('b'), argv=['{a}/x'])], "uses {a} but does not depend on 'a'"),
    ([dict(fake('a'), argv=['{a.best}'])], 'a stage reference is {STAGE}'),
    ([dict(fake('a'), retries=2)], "unknown key(s) ['retries'] for a command stage"),
    ([dict(name='a', config='configs/nowhere.py')], "config file 'configs/nowhere.py' not found"),
    ([dict(name='a', config='tests/toy_fixtures/toy_config.py')], 'has no experiment'),
    ([dict(name='a', kind='test', config='configs/demo/upernet_demo.py')], "missing key 'weights'"),
    ([dict(name='bad-name', kind='command', argv=['x'])], "key 'name' is 'bad-name'"),
])
def test_bad_pipelines_name_the_stage_and_key(tmp_path, stages, message):
    path = write_pipeline(tmp_path, stages, backbones=[DEMO])
    with pytest.raises(PipelineError) as info:
        load_pipeline(path)
    assert message in str(info.value) and path in str(info.value)


def test_unknown_backbone_lists_the_valid_names(tmp_path):
    path = write_pipeline(tmp_path, [dict(name='a', config='configs/demo/upernet_demo.py')], backbones=[DEMO])
    with pytest.raises(PipelineError, match="unknown backbone 'vit_demo_patch8_46'.*vit_demo_patch8_64"):
        load_pipeline(path, backbones=['vit_demo_patch8_46'])


def test_tool_reports_config_errors_with_exit_2(tmp_path):
    path = write_pipeline(tmp_path, [fake('a', depends_on=['zzz'])])
    result = subprocess.run([sys.executable, 'tools/pipeline.py', path], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 2 and "depends_on names 'zzz'" in result.stderr


def test_families_must_name_known_backbone_families(tmp_path):
    path = write_pipeline(tmp_path, [dict(name='a', config='configs/demo/upernet_demo.py', families=['transformer'])],
                          backbones=[DEMO])
    with pytest.raises(PipelineError, match=r"stage 'a': key 'families' is \['transformer'\], expected a list of "
                                            r"backbone families from \['cait', "):
        load_pipeline(path)


def test_imports_are_imported_and_given_to_the_train_and_test_stages(tmp_path):
    """``imports`` (a task or family from outside the suite) and --imports: imported when the pipeline is read, each
    train / test stage's command gets them; a bad one is refused naming the key or the option and the module, and so
    is a stage of a task the pipeline knows no record of."""
    config = tmp_path / 'seg.py'
    config.write_text(f"experiment = dict(task='seg', dataset='ade20k', backbone={DEMO!r})\n")
    path = write_pipeline(tmp_path, [dict(name='seg', config=str(config)), fake('data')], backbones=[DEMO],
                          imports=['json'])
    pipeline = load_pipeline(path, imports=['csv', 'json'])
    assert pipeline.imports == ['json', 'csv']
    assert command_of(pipeline, pipeline.stage(f'{DEMO}/seg'))[-3:] == ['--imports', 'json', 'csv']
    assert '--imports' not in command_of(pipeline, pipeline.stage('data'))  # a command stage runs as it says
    with pytest.raises(PipelineError, match=r"^--imports no_such_task_module: ModuleNotFoundError: No module named"):
        load_pipeline(path, imports=['no_such_task_module'])
    outside = tmp_path / 'depth.py'  # a task the pipeline has no record of: its summaries could not read its runs
    outside.write_text(f"experiment = dict(task='depth', dataset='toyroom', backbone={DEMO!r})\n")
    for stages, imports, message in (
            ([fake('data')], 'json', "key 'imports' is 'json', expected a list of module names"),
            ([fake('data')], ['no_such_task_module'], "key 'imports': no_such_task_module: ModuleNotFoundError"),
            ([dict(name='depth', config=str(outside))], [], "stage 'depth': config '" + str(outside) + "' has "
             "experiment.task='depth', expected one of ('pretrain', 'finetune', 'seg', 'det', 'transfer', 'frozen') "
             "(a task from outside the suite: its package in the pipeline's imports")):
        path = write_pipeline(tmp_path, stages, imports=imports, backbones=[DEMO])
        with pytest.raises(PipelineError) as info:
            load_pipeline(path)
        assert message in str(info.value) and path in str(info.value)
