"""The DeiT recipe's ablation switches (thesis Table 3.8): each row of the map's Table 3.8 is the DeiT-B config plus
keys; read back, each changes the one ingredient the row names and nothing else (the recipe audit's vocabulary), and
the objects it builds (the augmentation step, the batch mixing, the sampler, the backbone, the EMA hook, the
optimizer) are the switched ones. The 384 rows continue their pre-training: the table's pipeline runs each ablated
pre-training once, before its fine-tune."""
import json

import pytest
import torch
from mmengine.config import Config

from harness.experiment.cli import _add_ema_hook
from harness.pipeline.paper_table import find_table, table_stages
from pretrain.recipe_audit import hyperparameters
from vitbench.registry import HOOKS, TRANSFORMS
from vitbench.results.paper_map import row_runs

PRE = 'configs/pretrain/deit_base_in1k_300e.py'
# the row's change -> what the recipe audit then reads differently from the recipe
EXPECTED = {
    'SGD pre-training': dict(optimizer='sgd'),
    'no RandAugment': dict(rand_augment='rand-n0-m9-mstd0.5-inc1'),
    'AutoAugment instead of RandAugment': dict(rand_augment=None),
    'no Mixup': dict(mixup=0.0),
    'no CutMix': dict(cutmix=0.0),
    'no Mixup, no CutMix': dict(mixup=0.0, cutmix=0.0),
    'no random erasing': dict(random_erasing=0.0),
    'no stochastic depth': dict(drop_path=0.0),
    'no repeated augmentation': dict(aug_repeats=1),
    '+ dropout': dict(dropout=0.1),
    '+ EMA': dict(ema=4e-5),
}


def _rows():
    table = find_table('thesis:3.8')
    return {row['note'].split(' (*')[0]: row_runs(row)[0] for row in table.rows if row.get('img_size') != 384}


ROWS = _rows()


def _cfg(options):
    cfg = Config.fromfile(PRE)
    cfg.merge_from_dict(dict(options))
    return cfg


def test_each_switch_changes_its_ingredient_and_nothing_else():
    default = hyperparameters(Config.fromfile(PRE))
    assert (default['aug_repeats'], default['dropout'], default['ema']) == (3, 0.0, None)
    assert set(ROWS) == set(EXPECTED) | {'none (the DeiT recipe)', 'SGD fine-tuning'}
    for change, expected in EXPECTED.items():
        run = ROWS[change]
        assert run.config == PRE
        values = hyperparameters(_cfg(run.cfg_options))
        changed = {k: v for k, v in values.items() if v != default[k]}
        if change == 'AutoAugment instead of RandAugment':  # the step's type changes, its string with it
            changed.pop('auto_augment', None), changed.pop('augment_policy', None)  # keys of the DeiT III audit
        assert changed == expected, change


def test_the_switched_objects_are_built():
    from pretrain.preprocessor import ClsDataPreprocessor
    from pretrain.samplers import RepeatAugSampler
    rand = TRANSFORMS.build(_cfg(ROWS['no RandAugment'].cfg_options).train_dataloader.dataset.pipeline[3])
    assert rand.transform.num_layers == 0  # timm's RandAugment applying no operation
    assert TRANSFORMS.build(Config.fromfile(PRE).train_dataloader.dataset.pipeline[3]).transform.num_layers == 2
    if 'AutoAugment' in TRANSFORMS.module_dict:  # the policy step of the DeiT III chapter's switches
        auto = TRANSFORMS.build(_cfg(ROWS['AutoAugment instead of RandAugment'].cfg_options)
                                .train_dataloader.dataset.pipeline[3])
        assert type(auto).__name__ == 'AutoAugment'
    for change, mixup, erasing in (('no Mixup, no CutMix', False, True), ('no random erasing', True, False)):
        options = {k: v for k, v in _cfg(ROWS[change].cfg_options).model.data_preprocessor.items() if k != 'type'}
        preprocessor = ClsDataPreprocessor(**options)
        assert (preprocessor.mixup is not None, preprocessor.erasing is not None) == (mixup, erasing), change
    sampler = _cfg(ROWS['no repeated augmentation'].cfg_options).train_dataloader.sampler
    indices = list(RepeatAugSampler(list(range(512)), num_repeats=sampler.num_repeats))
    assert sorted(indices) == list(range(512))  # every image once per epoch, none repeated
    from backbones import create_model
    with torch.device('meta'):
        plain = create_model('deit_base_patch16_224', **{k: v for k, v in _cfg(
            ROWS['no stochastic depth'].cfg_options).model.backbone.items() if k not in ('type', 'arch')})
        dropout = create_model('deit_base_patch16_224', **{k: v for k, v in _cfg(
            ROWS['+ dropout'].cfg_options).model.backbone.items() if k not in ('type', 'arch')})
    assert all(b.drop_path1 is None and b.drop_path2 is None for b in plain.blocks)  # no stochastic depth at all
    assert dropout.blocks[0].attn.proj_drop.p == 0.1 and dropout.blocks[0].mlp.drop2.p == 0.1
    cfg = _cfg(ROWS['+ EMA'].cfg_options)
    cfg.custom_hooks = list(cfg.custom_hooks)
    _add_ema_hook(cfg)
    hook = HOOKS.build(cfg.custom_hooks[-1])
    assert type(hook).__name__ == 'EMAHook' and hook.ema_cfg['momentum'] == 4e-5
    plain_cfg = Config.fromfile(PRE)
    hooks = list(plain_cfg.custom_hooks)
    _add_ema_hook(plain_cfg)
    assert list(plain_cfg.custom_hooks) == hooks  # ema.enabled=False: nothing added
    sgd = _cfg(ROWS['SGD pre-training'].cfg_options).optim_wrapper.optimizer
    optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], **{k: v for k, v in sgd.items() if k != 'type'})
    assert optimizer.defaults['momentum'] == 0.9 and sgd.type == 'SGD'


def test_the_384_rows_fine_tune_their_own_ablated_pre_training():
    stages = {s['name']: s for s, _ in table_stages(find_table('thesis:3.8'))}
    no_mixup = [s for s in stages.values() if s.get('config', '').endswith('deit_base_ft384.py')
                and s.get('cfg_options') == {'model.data_preprocessor.mixup_alpha': 0.0}]
    assert len(no_mixup) == 1
    pre = stages[no_mixup[0]['depends_on'][0]]
    assert pre['config'] == PRE and pre['cfg_options'] == {'model.data_preprocessor.mixup_alpha': 0.0,
                                                           'experiment.pretrain.recipe': 'supervised:no-Mixup'}
    assert no_mixup[0]['checkpoint'] == f"{{{pre['name']}}}/backbone.pth"
    # the SGD pre-training's options but its label (experiment.pretrain.recipe: what its ↑384 row links by)
    sgd = {k: v for k, v in ROWS['SGD pre-training'].cfg_options.items() if not k.startswith('experiment.')}
    sgd_ft = [s for s in stages.values() if s.get('config', '').endswith('deit_base_ft384.py')
              and json.dumps(s.get('cfg_options')) == json.dumps(sgd)
              and stages[s['depends_on'][0]].get('cfg_options') is None]
    assert len(sgd_ft) == 1  # "SGD fine-tuning": the recipe's pre-training, SGD in the fine-tune only
    assert len([s for s in stages.values() if s.get('config') == PRE]) == 12  # the recipe and its 11 changes, once each


@pytest.mark.parametrize('rule, head', [('class_head', 0), ('distillation_head', 1)])
def test_one_head_scoring_of_a_distilled_model(rule, head):
    from pretrain.classifier import joint_scores
    logits = torch.tensor([[2.0, 0.0]]), torch.tensor([[0.0, 3.0]])
    torch.testing.assert_close(joint_scores(*logits, rule), logits[head].softmax(-1))


def _record(config, top1, recipe, options=None):
    """A result.json as tools/train.py writes it for a run of ``config`` (DeiT-B, 300 epochs)."""
    return dict(task='pretrain', dataset='imagenet', backbone='deit_base_patch16_224',
                backbone_overrides=dict(img_size=224), pretrain=dict(recipe=recipe, epochs=300, checkpoint=None),
                metrics=dict(top1=top1), eval='ss', img_size=224, variant_img_size=224, params_M=86.6, gflops=17.6,
                seed=0, config=config, git_commit='abc', created='2026-01-01T00:00:00+00:00',
                **({'options': options} if options is not None else {}))


def test_two_ablation_runs_of_one_config_are_two_rows_each_linked_to_its_own(tmp_path):
    """The recipe and its no-Mixup ablation, run as their rows say (one config; the ablation with its cfg_options,
    among them its label experiment.pretrain.recipe, which the run records as its pre-training recipe), are two
    rows of the board, each showing its own paper number. Without the label the two runs would share one row
    (backbone, recipe, epochs) as two cells told apart by their options."""
    from vitbench.results.paper import load_paper_tables
    from vitbench.results.reproduction import link_reported
    from vitbench.results.table import build_table
    by_note = {r['note']: r for r in find_table('thesis:3.8').rows if r.get('img_size') is None}
    recipe, ablation = by_note['none (the DeiT recipe)'], by_note['no Mixup']
    run = row_runs(ablation)[0]
    label = run.cfg_options['experiment.pretrain.recipe']
    assert label == ablation['recipe'] == 'supervised:no-Mixup'
    unlabelled = {k: v for k, v in run.cfg_options.items() if k != 'experiment.pretrain.recipe'}
    for board, ablated in (('labelled', _record(PRE, 78.4, label, run.cfg_options)),
                           ('unlabelled', _record(PRE, 78.4, 'supervised', unlabelled))):
        for name, rec in (('recipe', _record(PRE, 81.6, 'supervised')), ('no_mixup', ablated)):
            (tmp_path / board / name).mkdir(parents=True)
            (tmp_path / board / name / 'result.json').write_text(json.dumps(rec))
    measured = build_table([str(tmp_path / 'labelled')])
    assert sorted(r.recipe for r in measured.rows) == ['supervised', 'supervised:no-Mixup']
    links = {(link.row.recipe, link.reported) for link in link_reported(measured, load_paper_tables())}
    assert links >= {('supervised', recipe['cls/imagenet']), (label, ablation['cls/imagenet'])}
    collapsed = build_table([str(tmp_path / 'unlabelled')])
    assert len(collapsed.rows) == 1 and len(collapsed.rows[0].stats) == 2
