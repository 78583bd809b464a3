"""Map rows that evaluate a trained model rather than train one (``run: {config, test: true, needs, cfg_options}``):
thesis Figure 5.4's PatchConvNet-S60 trained at 224 (and fine-tuned at 384) tested at other resolutions.
``tools/pipeline.py --table`` runs each as a ``test`` stage, ``tools/test.py CONFIG`` on the last checkpoint of the
stage that trains its ``needs``, after it."""
import copy

import pytest
import torch
from mmengine.config import Config

from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from harness.pipeline.paper_table import describe, find_table, load_table, table_stages
from harness.pipeline.run import PipelineRunner
from vitbench.results.coverage import coverage
from vitbench.results.paper_map import _table, load_map, row_runs
from vitbench.results.result_file import LeaderboardError

PRETRAIN = 'configs/pretrain/patchconvnet_s60_in1k.py'
FINETUNE = 'configs/finetune/patchconvnet_s60_ft320.py'


def _stages():
    return {s['name']: s for s, _ in table_stages(find_table('thesis:Figure 5.4'))}


def test_figure_5_4s_tested_rows_are_test_stages_after_the_training_they_evaluate():
    stages = _stages()
    tests = {n: s for n, s in stages.items() if s.get('kind') == 'test'}
    assert len(tests) == 10
    of_224 = [s for s in tests.values() if s['config'] == PRETRAIN]
    of_384 = [s for s in tests.values() if s['config'] == FINETUNE]
    assert len(of_224) == len(of_384) == 5
    trained_384 = next(n for n, s in stages.items() if s.get('kind', 'train') == 'train' and s['config'] == FINETUNE
                       and s.get('cfg_options', {}).get('model.backbone.img_size') == 384)
    for group, provider in ((of_224, 'patchconvnet_s60_in1k'), (of_384, trained_384)):
        for stage in group:
            assert stage['depends_on'] == [provider]
            assert stage['weights'] == f'{{{provider}.last_checkpoint}}'  # the whole model, head and all
            assert 'checkpoint' not in stage  # not a training that starts from a backbone
            size = stage['cfg_options']['model.backbone.img_size']
            assert stage['cfg_options']['test_dataloader.dataset.pipeline.1.size'] == size
    assert sorted(s['cfg_options']['model.backbone.img_size'] for s in of_224) == [288, 320, 384, 448, 512]
    assert sorted(s['cfg_options']['model.backbone.img_size'] for s in of_384) == [224, 288, 320, 448, 512]
    # a test stage is never the weights a training starts from: the fine-tunes start from the 224 training
    assert all(s.get('checkpoint') == '{patchconvnet_s60_in1k}/backbone.pth' for s in stages.values()
               if s.get('kind', 'train') == 'train' and s['config'] == FINETUNE)
    lines = describe('thesis:Figure 5.4')
    assert any('tested@512 (tests the model patchconvnet_s60_in1k trained)' in line for line in lines)
    counts = {(c.document, c.table): c for c in coverage(load_map())}
    assert counts[('thesis', 'Figure 5.4')].runnable == 20


def test_the_pipeline_tests_the_last_checkpoint_once_the_training_left_one(tmp_path):
    pipeline = load_table('thesis:Figure 5.4', work_dir=str(tmp_path), launcher=[])
    stage = next(s for s in pipeline.stages if s.name == 'test_patchconvnet_s60_in1k__img_size_512__size_512')
    assert stage.kind == 'test' and stage.deps == ['patchconvnet_s60_in1k']
    plan = '\n'.join(PipelineRunner(pipeline).plan())
    assert "stage 'patchconvnet_s60_in1k' left no checkpoint" in plan
    trained = tmp_path / 'patchconvnet_s60_in1k'
    trained.mkdir()
    (trained / 'epoch_400.pth').write_bytes(b'')
    (trained / 'last_checkpoint').write_text(str(trained / 'epoch_400.pth'))
    plan = '\n'.join(PipelineRunner(pipeline).plan())
    line = next(line for line in plan.splitlines() if 'tools/test.py' in line and 'size_512__size_512' in line)
    assert f'tools/test.py {PRETRAIN} {trained}/epoch_400.pth' in line
    assert 'model.backbone.img_size=512' in line and 'test_dataloader.dataset.pipeline.1.size=512' in line


@pytest.mark.usefixtures('vitbench_scope')
def test_the_model_trained_at_224_loads_and_runs_at_a_tested_resolution():
    """The weights a 224 training leaves load into the model its test row builds (no position embedding: nothing
    to resample), and the test pipeline crops at R with the chapter's 0.875 ratio."""
    import pretrain  # noqa: F401  (registers the models)
    from vitbench.registry import MODELS
    row = next(r for r in find_table('thesis:Figure 5.4').rows if r['model'] == 'PatchConvNet-S60 tested@512')
    run, = row_runs(row)
    assert run.test and run.needs == PRETRAIN
    base = Config.fromfile(PRETRAIN)
    trained = MODELS.build(copy.deepcopy(base.model)).eval()
    cfg = copy.deepcopy(base)
    cfg.merge_from_dict(run.cfg_options)
    assert cfg.test_dataloader.dataset.pipeline[1] == dict(type='ResizeCenterCrop', size=512, crop_pct=0.875)
    assert cfg.experiment.backbone_overrides.img_size == 512
    tested = MODELS.build(cfg.model).eval()
    tested.load_state_dict(trained.state_dict())  # strict: every key, every shape
    with torch.no_grad():
        out = tested.backbone(torch.randn(1, 3, 512, 512))
    assert torch.isfinite(out).all()


def test_a_test_row_without_the_training_it_tests_is_one_line():
    rows = [dict(model='M', run=dict(config=PRETRAIN, test=True))]
    with pytest.raises(LeaderboardError, match=r"^here \(thesis 9.9\) \(M\): 'run' is .*test: true, an evaluation "
                                               r"of the model that needs trains, with needs\)$"):
        _table('thesis', dict(number='9.9', title='T', rows=rows), 'here')
