"""``tools/pipeline.py --table DOC:NUMBER`` (harness/pipeline/paper_table.py): a paper table's stages are its runnable
rows as the map of the papers gives them (config, overrides, backbone, the pre-training they need), then a
leaderboard; an unknown table and a table with nothing to run are refused in one line. Nothing trains here."""
import json
import os
import subprocess
import sys

import pytest

from _pipeline_helpers import in_repo  # noqa: F401 (autouse: each test runs from the repository root)
from _tool_helpers import REPO
from harness.pipeline.command import command_of
from harness.pipeline.paper_table import describe, find_table, load_table, table_pipeline
from harness.pipeline.spec import PipelineError
from vitbench.results.paper_map import MapTable, _table, load_map, row_runs
from vitbench.results.result_file import LeaderboardError


def _option(argv, flag):
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_a_tables_stages_are_its_runnable_rows_after_the_pretraining_they_need(tmp_path):
    pipeline = load_table('thesis:6.12', work_dir=str(tmp_path))
    table = find_table('deit3_ade20k')  # its leaderboard id names the same entry
    assert table.key == 'thesis:6.12' and pipeline.path == '--table thesis:6.12'
    rows = [(r['model'], run) for r in table.rows for run in row_runs(r)]
    trains = [s for s in pipeline.stages if s.kind == 'train']
    pretrain = {'configs/pretrain/deit3_small_in1k_400e.py', 'configs/pretrain/deit3_base_in1k_400e.py',
                'configs/pretrain/deit3_large_in1k_400e.py', 'configs/pretrain/deit3_tiny_in1k_400e.py'}
    assert sorted(s.config for s in trains) == sorted([run.config for _, run in rows] + list(pretrain))
    assert len(rows) == 8 and all(run.config.startswith('configs/upernet_deit3_') for _, run in rows)
    by_config = {s.config: s for s in trains if not s.spec.get('args')}
    tiny = next(s for s in trains if s.spec.get('args'))  # ViT-T: the ViT-S config on the tiny backbone
    argv = command_of(pipeline, tiny)
    assert _option(argv, '--backbone') == 'deit3_tiny_patch16_224' and tiny.config == 'configs/upernet_deit3_s.py'
    assert _option(argv, '--checkpoint').endswith(os.path.join('deit3_tiny_in1k_400e', 'backbone.pth'))
    for size, name in (('s', 'small'), ('b', 'base'), ('l', 'large')):
        row = by_config[f'configs/upernet_deit3_{size}.py']
        before = by_config[f'configs/pretrain/deit3_{name}_in1k_400e.py']
        assert row.deps == [before.id] and before.deps == []
        argv = command_of(pipeline, row)
        assert _option(argv, '--checkpoint') == os.path.join(before.work_dir, 'backbone.pth')
        assert _option(argv, '--work-dir') == os.path.join(str(tmp_path), f'upernet_deit3_{size}')
        assert '--backbone' not in argv and '--cfg-options' not in argv
    assert by_config['configs/upernet_deit3_b_in21k.py'].deps == []  # the map names no pre-training for it
    assert pipeline.launcher == ['torchrun', '--nproc_per_node', '8']
    board = pipeline.stages[-1]
    assert board.kind == 'leaderboard' and sorted(board.deps) == sorted(s.id for s in trains)
    assert board.spec.get('paper', True) is True  # with the paper tables: this one is on the board


def test_overrides_run_as_cfg_options_and_each_run_is_a_stage(tmp_path):
    pipeline = load_table('cait:3', work_dir=str(tmp_path))
    table = find_table('cait:3')
    runs = [run for r in table.rows for run in row_runs(r)]
    trains = [s for s in pipeline.stages if s.kind == 'train']
    assert len(trains) == len(runs) == 36  # 9 models x (224, ↑384) x (Υ, not): every pre-training a row's own stage
    plain = [s for s in trains if s.name == 'cait_s24_in1k_400e']
    ablated = [s for s in trains if s.name == 'cait_s24_in1k_400e__distillation_None']
    assert len(plain) == len(ablated) == 1 and plain[0].config == ablated[0].config
    argv = command_of(pipeline, ablated[0])
    # the stage is named by what changes the experiment; the recipe label its record gets goes along
    assert argv[argv.index('--cfg-options') + 1:] == ['model.distillation=None',
                                                      'experiment.pretrain.recipe=supervised']
    assert '--cfg-options' not in command_of(pipeline, plain[0])


def test_a_swapped_backbone_and_a_row_that_is_another_rows_pretraining(tmp_path):
    """A map entry as a YAML file holds it: one row pre-trains, the second starts from it on a swapped backbone."""
    sup = 'configs/demo/sup_demo.py'
    table = MapTable('thesis', '9.9', 'made up', rows=[
        dict(model='supervised', run=sup),
        dict(model='UperNet', run=dict(config='configs/demo/upernet_demo.py', backbone='deit3_small_patch16_224',
                                       cfg_options={'train_cfg.max_iters': 4}), needs=sup),
        dict(model='UperNet demo', run='configs/demo/upernet_demo.py', needs='configs/demo/mae_demo.py')])
    pipeline = table_pipeline(table, work_dir=str(tmp_path), launcher=[])
    names = [s.name for s in pipeline.stages]
    # the pre-training no row is first, then the rows; sup_demo is the row's own stage, not a second one
    assert names == ['mae_demo', 'sup_demo', 'upernet_demo__max_iters_4__on_deit3_small_patch16_224', 'upernet_demo',
                     'leaderboard']
    swapped = pipeline.stage(names[2])
    assert swapped.deps == ['sup_demo'] and pipeline.stage('upernet_demo').deps == ['mae_demo']
    argv = command_of(pipeline, swapped)
    assert argv[0] == sys.executable and _option(argv, '--backbone') == 'deit3_small_patch16_224'
    assert _option(argv, '--checkpoint') == os.path.join(str(tmp_path), 'sup_demo', 'backbone.pth')
    assert argv[-2:] == ['--cfg-options', 'train_cfg.max_iters=4']
    table.rows[1]['run']['backbone'] = 'deit3_smol'
    with pytest.raises(PipelineError, match="--table thesis:9.9: backbones: unknown backbone 'deit3_smol'"):
        table_pipeline(table, work_dir=str(tmp_path))


def test_a_pretraining_with_overrides_is_a_stage_of_its_own(tmp_path):
    """``needs: {config, cfg_options}`` (an ablation of the pre-training, thesis Table 6.5): its own stage with the
    overrides, which the rows that need it so start from; the plain pre-training stays another stage."""
    sup = 'configs/demo/sup_demo.py'
    ablated = dict(config=sup, cfg_options={'model.data_preprocessor.mixup_alpha': 0.0})
    table = MapTable('thesis', '9.9', 'made up', rows=[
        dict(model='plain', run=sup),
        dict(model='from plain', run='configs/demo/finetune_attn_demo.py', needs=sup),
        dict(model='from ablated', run=dict(config='configs/demo/finetune_attn_demo.py', needs=ablated)),
        dict(model='from ablated too', run=dict(config='configs/demo/finetune_attn_demo.py',
                                                cfg_options={'train_cfg.max_epochs': 2}, needs=ablated))])
    pipeline = table_pipeline(table, work_dir=str(tmp_path), launcher=[])
    names = [s.name for s in pipeline.stages]
    assert names[0] == 'sup_demo__mixup_alpha_0_0' and names.count('sup_demo') == 1 and len(names) == 6
    ablation = pipeline.stage('sup_demo__mixup_alpha_0_0')
    assert command_of(pipeline, ablation)[-2:] == ['--cfg-options', 'model.data_preprocessor.mixup_alpha=0.0']
    from_ablated = [s for s in pipeline.stages if s.deps == ['sup_demo__mixup_alpha_0_0']]
    assert len(from_ablated) == 2 and all(_option(command_of(pipeline, s), '--checkpoint') == os.path.join(
        str(tmp_path), 'sup_demo__mixup_alpha_0_0', 'backbone.pth') for s in from_ablated)
    assert pipeline.stage('finetune_attn_demo').deps == ['sup_demo']


def test_every_runnable_table_of_the_map_makes_a_checked_pipeline(tmp_path):
    runnable = [t for t in load_map() if not t.same_as and any(row_runs(r) for r in t.rows)]
    assert len(runnable) >= 20
    for table in runnable:
        pipeline = load_table(table.key, work_dir=str(tmp_path / table.document))
        assert pipeline.stages[-1].kind == 'leaderboard'
        all_runs = {(run.config, json.dumps(run.cfg_options, sort_keys=True), run.backbone, run.needs,
                     json.dumps(run.needs_options, sort_keys=True), run.test)
                    for r in table.rows for run in row_runs(r)}
        runs = {r[:5] for r in all_runs if not r[5]}  # the trainings; a test: true run evaluates one of them
        trains = [s for s in pipeline.stages if s.kind == 'train']
        assert {(s.config, s.spec.get('checkpoint', '')) for s in trains} >= {(c, '') for c, _, _, n, _ in runs
                                                                              if not n}
        # each pre-training a row needs (with its cfg_options) runs once: as a row's own stage, else as one more;
        # two configs that are one run are one stage (test below)
        merged = 1 if table.key == 'maelite:5' else 0
        needed = {(r[3], r[4]) for r in all_runs if r[3]} - {(c, o) for c, o, b, _, _ in runs if not b}
        assert len(trains) == len(runs) - merged + len(needed), table.key
        assert len([s for s in pipeline.stages if s.kind == 'test']) == len(all_runs) - len(runs), table.key


def test_a_pretraining_with_overrides_is_the_row_that_runs_it_so(tmp_path):
    """``needs: {config, cfg_options}``: the fine-tune without distillation starts from the pre-training without it
    (CaiT Table 3's ↑384 columns), the distilled one from the distilled pre-training; each pre-training runs once."""
    pre, ft = 'configs/pretrain/cait_xxs24_in1k_400e.py', 'configs/finetune/cait_xxs24_ft384.py'
    plain = {'model.distillation': None}
    table = MapTable('thesis', '9.8', 'made up', rows=[
        dict(model='224', run=dict(config=pre, cfg_options=plain)),
        dict(model='384', run=dict(config=ft, cfg_options=plain, needs=dict(config=pre, cfg_options=plain))),
        dict(model='384 Υ', run=ft, needs=pre),
        dict(model='384 at 0.875', run=dict(config=ft, cfg_options=dict(plain, test_crop_ratio=0.875),
                                            needs=dict(config=pre, cfg_options=plain)))])
    pipeline = table_pipeline(table, work_dir=str(tmp_path), launcher=[])
    deps = {s.name: s.deps for s in pipeline.stages if s.kind == 'train'}
    assert deps == {'cait_xxs24_in1k_400e': [], 'cait_xxs24_in1k_400e__distillation_None': [],
                    'cait_xxs24_ft384__distillation_None': ['cait_xxs24_in1k_400e__distillation_None'],
                    'cait_xxs24_ft384': ['cait_xxs24_in1k_400e'],
                    'cait_xxs24_ft384__distillation_None__test_crop_ratio_0_875':
                        ['cait_xxs24_in1k_400e__distillation_None']}
    argv = command_of(pipeline, pipeline.stage('cait_xxs24_ft384__distillation_None'))
    assert _option(argv, '--checkpoint') == os.path.join(str(tmp_path), 'cait_xxs24_in1k_400e__distillation_None',
                                                         'backbone.pth')
    table.rows[1]['run']['needs'] = dict(config=pre, options=plain)
    with pytest.raises(LeaderboardError, match=r"\(384\): 'run' is .* \(needs: a config path or"):
        _table('thesis', dict(number='9.8', title='t', rows=table.rows), 'here')


def test_a_table_printed_again_runs_its_homes_rows():
    assert find_table('thesis:3.17').key == 'cait:5' and find_table('Maelite:figure 7').key == 'maelite:Figure 7'


@pytest.mark.parametrize('table, expected', [
    ('thesis:6.99', "--table 'thesis:6.99': no such table in the map of the papers (DOCUMENT:NUMBER as "
     'docs/coverage.md lists them, e.g. thesis:6.12, or a leaderboard id); close: thesis:6.9'),
    ('deit3_ade2k', 'close: deit3_ade20k'),
    ('thesis:2.1', '--table thesis:2.1 (Separability of fine classes after coarse-label training (CIFAR-100, '
     'ResNet-18)): no row of it runs here (none): '),  # then the map's why, checked below
    ('maelite:Figure 5', 'no row of it runs here'),  # a plotted figure with no analysis built
])
def test_unknown_and_not_runnable_tables_are_refused_in_one_line(table, expected, tmp_path):
    result = subprocess.run([sys.executable, 'tools/pipeline.py', '--table', table, '--dry-run',
                             '--work-dir', str(tmp_path)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 2 and result.stdout == ''
    assert result.stderr.startswith('error: ') and expected in result.stderr
    assert result.stderr.count('\n') == 1, result.stderr
    why = find_table('thesis:2.1').why
    if table == 'thesis:2.1':
        assert why in result.stderr


def test_the_tool_dry_runs_a_table_and_refuses_a_config_with_it(tmp_path):
    result = subprocess.run([sys.executable, 'tools/pipeline.py', '--table', 'thesis:6.12', '--dry-run',
                             '--work-dir', str(tmp_path)], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith('table thesis:6.12: ') and "table 'deit3_ade20k'" in out
    assert f'--checkpoint {tmp_path}/deit3_small_in1k_400e/backbone.pth' in out
    assert '[13/13] leaderboard (leaderboard; to run) after: deit3_tiny_in1k_400e, deit3_small_in1k_400e,' in out
    assert not os.listdir(tmp_path)  # a dry run writes nothing
    both = subprocess.run([sys.executable, 'tools/pipeline.py', 'configs/pipelines/demo.py', '--table', 'thesis:6.12',
                           '--dry-run'], cwd=REPO, capture_output=True, text=True)
    assert both.returncode == 2 and 'one of them' in both.stderr


def test_rows_of_one_config_after_different_pretrainings_are_stages_of_their_own(tmp_path):
    pipeline = load_table('maelite:3', work_dir=str(tmp_path))  # MoCo-v3 / MAE pre-trained on 1%, 10%, LT, all
    finetunes = [s for s in pipeline.stages if s.config == 'configs/finetune/mae_lite_vit_tiny12h_ft_300e.py']
    starts = sorted(command_of(pipeline, s)[command_of(pipeline, s).index('--checkpoint') + 1] for s in finetunes)
    assert starts == sorted(os.path.join(str(tmp_path), f'mae_vit_tiny12h_in1k{d}_400e', 'backbone.pth')
                            for d in ('', '1pct', '10pct', 'lt'))
    assert len(pipeline.stages) == 8 + 8 + 1


def test_needs_are_transitive_and_a_cycle_is_one_line(tmp_path):
    """A row's pre-training that is a row of the table needing another run: the chain runs in order, each stage
    from the previous one's backbone.pth; rows that need each other are refused in one line."""
    sup, mae, seg = 'configs/demo/sup_demo.py', 'configs/demo/mae_demo.py', 'configs/demo/upernet_demo.py'
    table = MapTable('thesis', '9.9', 'made up', rows=[
        dict(model='segmentation', run=seg, needs=sup),
        dict(model='fine-tune', run=sup, needs=mae)])
    pipeline = table_pipeline(table, work_dir=str(tmp_path), launcher=[])
    assert sorted(s.name for s in pipeline.stages) == ['leaderboard', 'mae_demo', 'sup_demo', 'upernet_demo']
    assert pipeline.stage('upernet_demo').deps == ['sup_demo'] and pipeline.stage('sup_demo').deps == ['mae_demo']
    assert _option(command_of(pipeline, pipeline.stage('sup_demo')), '--checkpoint') == os.path.join(
        str(tmp_path), 'mae_demo', 'backbone.pth')
    table.rows.append(dict(model='pre-training', run=mae, needs=seg))
    with pytest.raises(PipelineError) as info:
        table_pipeline(table, work_dir=str(tmp_path), launcher=[])
    assert str(info.value) == ("--table thesis:9.9: the rows' needs form a cycle: "
                               'upernet_demo.py -> sup_demo.py -> mae_demo.py -> upernet_demo.py')


def test_two_configs_that_are_the_same_run_are_one_stage():
    """MAE-lite Table 5: maskrcnn_vit_tiny12h_dmae.py is maskrcnn_vit_tiny12h_mae.py but for the weights' path,
    which the row's needs replaces: one stage, not two."""
    pipeline = load_table('maelite:5')
    after_dmae = [s for s in pipeline.stages if s.deps == ['dmae_vit_tiny12h_in1k_400e']]
    assert sorted(s.config for s in after_dmae) == ['configs/finetune/mae_lite_vit_tiny12h_ft_300e.py',
                                                     'configs/maskrcnn_vit_tiny12h_dmae.py']


def test_cait_table1_re_trains_each_depth_with_the_scales_of_its_layerscale_row(tmp_path):
    """CaiT §4.1 in the map: each re-training row needs the LayerScale row of its depth (the same run, not another
    training), starts with its backbone.pth as --checkpoint, and adds only the keys that freeze those scales;
    configs/pipelines/cait_layerscale_retrain.py runs the same eight trainings alone."""
    from harness.pipeline.run import PipelineRunner
    from harness.pipeline.spec import load_pipeline
    pipeline = load_table('cait:1', work_dir=str(tmp_path))
    plan = '\n'.join(PipelineRunner(pipeline).plan())  # what --dry-run prints after the table's description
    trains = [s for s in pipeline.stages if s.kind == 'train']
    assert len(trains) == 28 and plan.count('/tools/train.py ') == 28  # every row once, nothing more
    assert '28 of its 28 rows run' in describe('cait:1')[0]
    fixed = [s for s in trains if s.spec['cfg_options'].get('model.backbone.residual_scale_from') == 'checkpoint']
    frozen = {'model.backbone.residual_scale_trainable': False, 'model.backbone.residual_scale_from': 'checkpoint',
              'experiment.pretrain.recipe': 'supervised:fixed LayerScale'}
    assert len(fixed) == 4
    for stage in fixed:
        layerscale = pipeline.stage(stage.deps[0])
        assert stage.deps == [layerscale.id] and layerscale.deps == []
        assert stage.spec['cfg_options'] == dict(layerscale.spec['cfg_options'], **frozen)
        assert layerscale.spec['cfg_options']['model.backbone.residual_scale'] == 'layerscale'
        checkpoint = os.path.join(layerscale.work_dir, 'backbone.pth')
        assert _option(command_of(pipeline, stage), '--checkpoint') == checkpoint
        assert f"[{pipeline.stages.index(stage) + 1}/29] {stage.name} (train; to run) after: {layerscale.name}\n" \
               f'    torchrun' in plan and f'--checkpoint {checkpoint} ' in plan
    alone = load_pipeline('configs/pipelines/cait_layerscale_retrain.py', work_dir=str(tmp_path / 'alone'))
    runs = {json.dumps(s.spec['cfg_options'], sort_keys=True) for s in alone.stages if s.kind == 'train'}
    assert runs == {json.dumps(s.spec['cfg_options'], sort_keys=True)
                    for s in fixed + [pipeline.stage(f.deps[0]) for f in fixed]}
    assert all(bool(s.deps) == ('checkpoint' in s.spec) for s in alone.stages if s.kind == 'train')


def test_cait_transfer_rows_run_the_deit_protocol_with_the_cait_backbone_its_drop_path_and_crop(tmp_path):
    """Thesis Table 3.19: each transfer stage starts from its row's 224 training (distilled or not, evaluated at
    crop 0.875), and tools/train.py resolves it to the CaiT model with its own training's drop path, the
    evaluation crop 0.875 and the DeiT transfer protocol's settings, recording the options the row links."""
    import importlib.util
    from harness.experiment.cli import load_config
    from harness.experiment.linked_protocol import config_protocol
    from harness.experiment.protocol import protocol_of
    from vitbench.results.experiment import link_target
    from vitbench.results.paper_map import link_targets
    pipeline = load_table('thesis:3.19', work_dir=str(tmp_path))
    row = next(r for r in find_table('thesis:3.19').rows if r['model'] == 'CaiT-M-36')
    stage = pipeline.stage('cars_deit3_s__drop_path_rate_0_3__test_crop_ratio_0_875__on_cait_m36_224')
    before = pipeline.stage(stage.deps[0])
    assert before.config == 'configs/pretrain/cait_m36_in1k_400e.py' and before.spec['cfg_options'] == {
        'model.distillation': None, 'experiment.pretrain.recipe': 'supervised', 'test_crop_ratio': 0.875}
    argv = command_of(pipeline, stage)
    assert _option(argv, '--checkpoint') == os.path.join(before.work_dir, 'backbone.pth')
    argv = argv[argv.index(os.path.join(REPO, 'tools', 'train.py')) + 1:]
    at = argv.index('--checkpoint')
    spec = importlib.util.spec_from_file_location('vitbench_train_tool', os.path.join(REPO, 'tools', 'train.py'))
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    cfg = load_config(train.parse_args(argv[:at] + argv[at + 2:] + ['--launcher', 'none']))  # no weights here
    assert (cfg.model.backbone.type, cfg.model.backbone.arch, cfg.model.backbone.drop_path_rate) == \
        ('vitbench.CaiT', 'cait_m36_224', 0.3)
    assert [t['crop_pct'] for t in cfg.val_dataloader.dataset.pipeline if t['type'] == 'ResizeCenterCrop'] == [0.875]
    recorded = link_target(stage.config, cfg.experiment.options)
    assert recorded in link_targets(row) and protocol_of(cfg) == config_protocol(recorded)
    assert protocol_of(cfg)['name'] == 'transfer_deit' and cfg.optim_wrapper.optimizer.lr == 1e-4


def test_a_tables_prepare_command_runs_before_every_training(tmp_path):
    """"Three things" Table 7: the BeiT+FT rows' pre-training reads a k-means tokenizer file that
    tools/beit_tokenizer.py fits; the table's ``prepare`` makes it a command stage that every training depends on
    (done when the file exists), so --table runs the table whole. A malformed entry is refused in one line."""
    pipeline = load_table('three_things:7', work_dir=str(tmp_path))
    prepare = pipeline.stage('prepare_kmeans_8192_in1k')
    assert prepare.kind == 'command' and prepare.spec['creates'] == 'work_dirs/beit_tokenizer/kmeans_8192_in1k.pth'
    argv = command_of(pipeline, prepare)
    assert argv[0] == sys.executable and argv[1].endswith(os.path.join('tools', 'beit_tokenizer.py'))
    assert argv[2:] == ['configs/pretrain/beit_three_things_b12_in1k_300e.py']
    trainings = [s for s in pipeline.stages if s.kind == 'train']
    assert len(trainings) == 27 and all('prepare_kmeans_8192_in1k' in s.deps for s in trainings)
    assert any('prepare_kmeans_8192_in1k' in line for line in describe('three_things:7'))
    expected = r"^three_things\.yaml 7 .*: 'prepare' is .*, expected a list of \{argv: \[a tools/ script, ARG, ...\], creates"
    with pytest.raises(LeaderboardError, match=expected):
        _table('three_things', dict(number='7', title='t', prepare=[dict(argv=['rm', '-rf', '/'], creates='x')]),
               'three_things.yaml 7')
