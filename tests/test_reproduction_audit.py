"""The reproduction audit: for every downstream paper row a config claims to reproduce (`config` in
vitbench/results/papers/), the choices as well as the values — which pre-training produced the checkpoint the config (and the paper pipeline's
stage) loads, with the table's epochs at 224 px, and which protocol it runs. The thesis evaluates "400 epochs
schedules for ImageNet-1k models" (§6.3.5.2, Tables 6.11 / 6.12) under XCiT's UperNet; an 800-epoch model trained
at 192 px, or MAE's UperNet protocol, is another experiment."""
import re
from pathlib import Path

import pytest
from mmengine.config import Config

from harness.experiment.protocol import protocol_of
from harness.pipeline.spec import load_pipeline
from pretrain.export import pretraining_of
from vitbench.results.experiment import split_target
from vitbench.results.paper import cell_protocol, load_paper_tables
from vitbench.results.table import recipe_label

ROOT = Path(__file__).resolve().parents[1]
DOWNSTREAM = ('seg', 'box', 'mask', 'transfer')
KINDS_OF_TASK = dict(seg=('seg',), det=('box', 'mask'), transfer=('transfer',))  # the cells a run of the task fills
# Released files a config may load, with what made them (their sources' model cards): (epochs, train resolution).
OFFICIAL = {
    'checkpoints/patchconvnet_b120_224_1k.pth': (400, 224),  # facebookresearch/deit PatchConvNet: 400 epochs, 224
    'checkpoints/resmlp_24_no_dist.pth': (400, 224),  # facebookresearch/deit ResMLP-S24 (thesis §4.3.1: 400 epochs)
}


def downstream_links():
    """(table id, paper row, its downstream columns, config) for every config a downstream paper row names."""
    out = []
    for table in load_paper_tables():
        for row in table.rows:
            columns = [column for column in row.values if column.kind in DOWNSTREAM]
            out += [(table.id, row, columns, config) for config in row.configs if columns]
    return out


LINKS = downstream_links()


def load(config: str) -> Config:
    """A link target's config with the options of the row's run (vitbench.results.experiment.link_target)."""
    path, options = split_target(config)
    cfg = Config.fromfile(ROOT / path)
    cfg.merge_from_dict(options)
    return cfg


def recipe_of(checkpoint: str, finetune_size: int = 224):
    """The (pre-training epochs, train resolution, config) behind ``checkpoint``: work_dirs/<name>/backbone.pth is
    the export of configs/pretrain/<name>.py, or of configs/finetune/<name>.py, whose own checkpoint is followed
    back to its pre-training (fine-tuned at ``finetune_size``); a released file, as OFFICIAL says."""
    if checkpoint in OFFICIAL:
        return (*OFFICIAL[checkpoint], checkpoint)
    match = re.fullmatch(r'work_dirs/([\w.-]+)/backbone\.pth', checkpoint)
    assert match, f'{checkpoint}: neither the export of a recipe config nor a known released file'
    if (ROOT / f'configs/pretrain/{match[1]}.py').is_file():
        path = f'configs/pretrain/{match[1]}.py'
        return (*train_schedule(load(path)), path)
    path = f'configs/finetune/{match[1]}.py'
    assert (ROOT / path).is_file(), f'{checkpoint}: no config configs/{{pretrain,finetune}}/{match[1]}.py made it'
    finetune = load(path)
    assert train_schedule(finetune)[1] == finetune_size, (
        f'{path} fine-tunes at {train_schedule(finetune)[1]} px, not {finetune_size}')
    epochs, size, made_by = recipe_of(finetune.model.backbone.init_cfg.checkpoint)
    return epochs, size, f'{made_by} then {path}'




def train_schedule(cfg: Config):
    size = cfg.model.backbone.get('img_size', 224)
    return cfg.train_cfg.max_epochs, size if isinstance(size, int) else size[0]


def test_the_audit_covers_the_downstream_tables_it_claims():
    tables = {table_id for table_id, *_ in LINKS}
    assert {'deit3_ade20k', 'deit3_transfer', 'patchconvnet_ade20k', 'patchconvnet_coco', 'maelite_table5',
            'resmlp_ade20k'} <= tables


@pytest.mark.parametrize('table_id, row, columns, config', LINKS,
                         ids=[f'{t}:{r.variant}:{Path(cfg).stem}' for t, r, _, cfg in LINKS])
def test_config_runs_the_tables_protocol_from_the_tables_checkpoint(table_id, row, columns, config):
    cfg = load(config)
    protocol = (protocol_of(cfg) or {}).get('name', '')
    columns = [column for column in columns if column.kind in KINDS_OF_TASK.get(cfg.experiment.task, ())]
    if not columns:
        return  # a config of another task (an ImageNet fine-tune) named by a row with downstream columns too
    for column in columns:
        assert protocol == cell_protocol(row, column), (
            f'{config} runs {protocol!r}, table {table_id} {row.backbone} {column.label} is measured under '
            f'{cell_protocol(row, column)!r}')
    if cfg.experiment.backbone != row.variant:
        return  # a --backbone swap of this config (the paper pipeline's stage checks its checkpoint)
    if not cfg.model.backbone.get('init_cfg'):  # trained from scratch (thesis Table 3.7's CIFAR-10 rows)
        assert (row.link_recipe, row.epochs) == ('scratch', 0), f'{config} starts from no checkpoint; table ' \
            f'{table_id} {row.backbone} says {row.link_recipe}, {row.epochs} epochs'
        return
    # a row "pre-trained at R" (img_size: R, thesis Table 6.12's @384 / @320) segments the ImageNet fine-tune at R
    epochs, size, made_by = recipe_of(cfg.model.backbone.init_cfg.checkpoint, int(row.res or 224))
    assert (epochs, size) == (row.epochs, 224), (
        f'{config} starts from {made_by} ({epochs} epochs at {size} px); table {table_id} {row.backbone} used '
        f'{row.epochs} epochs at 224')


@pytest.mark.parametrize('pipeline_config', ['configs/pipelines/paper_deit3.py', 'configs/pipelines/paper_maelite.py'])
def test_paper_pipeline_stages_load_the_tables_checkpoints(pipeline_config):
    """A stage whose config and backbone a paper row names depends on the pre-training stage of that row's epochs
    at 224 px."""
    pipeline = load_pipeline(pipeline_config)
    by_experiment = {(config, row.variant, row.link_recipe): row
                     for table in load_paper_tables() for row in table.rows for config in row.configs}
    checked = 0
    for stage in pipeline.stages:
        makers = [pipeline.stage(d) for d in stage.deps if pipeline.stage(d).spec.get('outputs') == ['backbone.pth']]
        if stage.kind != 'train' or not makers:
            continue
        assert len(makers) == 1, f'{stage.id}: loads the weights of {[m.id for m in makers]}'
        maker = load(makers[0].config)
        recipe = recipe_label(dict(maker.experiment.get('pretrain') or {}, **pretraining_of(maker.experiment)))
        row = by_experiment.get((stage.config, stage.swap or stage.backbone, recipe))
        if row is None:
            continue  # no paper row is this experiment
        epochs, size = train_schedule(maker)
        assert (epochs, size) == (row.epochs, 224), (
            f'{stage.id} ({stage.config}) starts from {makers[0].id} ({makers[0].config}: {epochs} epochs at {size} '
            f'px); the paper row {row.backbone} used {row.epochs} epochs at 224')
        checked += 1
    # DeiT III: UperNet for ViT-S and ViT-B, six transfers for ViT-S and six for ViT-B (the swapped configs of thesis
    # Table 6.11's ViT-B row), ViT-B's full and
    # attention-only ↑384 fine-tunes ("Three things" Table 5); MAE-lite: the ImageNet fine-tune and Mask R-CNN, from
    # MAE and from distilled MAE, the fine-tune from MoCo-v3, and Table 3's six fine-tunes from MAE and MoCo-v3
    # pre-trained on the subsets; ViT-S's attention-only Flowers transfer ("Three things" Table 6)
    assert checked == (2 + 6 + 6 + 2 + 1 if 'deit3' in pipeline_config else 4 + 1 + 6)


def test_a_protocol_digest_follows_the_settings_it_fixes_and_only_those():
    base = protocol_of(load('configs/upernet_deit3_b.py'))
    assert base['name'] == 'upernet_xcit160k' and len(base['digest']) == 12
    changed = load('configs/upernet_deit3_b.py')
    changed.merge_from_dict({'optim_wrapper.optimizer.lr': 1e-4})  # what --cfg-options does
    assert protocol_of(changed) == dict(name='upernet_xcit160k', digest=protocol_of(changed)['digest'])
    assert protocol_of(changed)['digest'] != base['digest']
    logged = load('configs/upernet_deit3_b.py')
    logged.merge_from_dict({'default_hooks.logger.interval': 10})  # not a protocol setting
    assert protocol_of(logged) == base
    assert protocol_of(load('configs/upernet_deit3_l.py')) == base  # same settings, another backbone
    # the head rule, not the widths it gives: ViT-S's 384-channel head is the same rule as ViT-B's 512
    assert protocol_of(load('configs/upernet_deit3_s.py')) == base
    assert protocol_of(load('configs/pretrain/deit3_base_in1k_400e.py')) is None  # a recipe is its own config


def test_a_tta_run_records_the_protocol_of_the_model_it_wraps():
    """tools/test.py --tta wraps the model (model.module): the protocol's model settings are read there, and the
    digest is the single-scale run's (result.json tells the two apart by its eval, ss / ms)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location('vitbench_test_tool', ROOT / 'tools' / 'test.py')
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    for config in ('configs/upernet_deit3_b.py', 'configs/demo/upernet_demo.py'):
        cfg = load(config)
        single = protocol_of(cfg)
        tool.use_tta(cfg)
        assert 'test_cfg' not in cfg.model and protocol_of(cfg) == single
