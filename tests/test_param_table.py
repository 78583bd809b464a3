"""harness/experiment/param_table.py: every parameter's learning rate, weight decay and layer, audited per recipe
and per family on the real optimiser wrappers of the configs (built on the meta device: no memory, no weights).
No trainable parameter may be in no group (it would silently not train), and each recipe's choices are those of
its official code."""
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import MODELS, DefaultScope

import downstream  # noqa: F401  (registers the seg / det glue)
from harness.experiment.param_table import optimizers_of, param_table
import pretrain  # noqa: F401

REPO = Path(__file__).resolve().parents[1]


def table(config: str):
    cfg = Config.fromfile(REPO / 'configs' / config)
    scope = cfg.get('default_scope', 'vitbench')
    if scope in ('mmseg', 'mmdet'):
        __import__(f'{scope}.models')
    with DefaultScope.overwrite_default_scope(scope), torch.device('meta'):
        model = MODELS.build(cfg.model)
        wrapper = build_optim_wrapper(model, cfg.optim_wrapper)
    rows = param_table(model, optimizers_of(wrapper))
    return cfg, model, {r['name']: r for r in rows}


def backbone_of(model):
    return model.backbone


@pytest.mark.parametrize('config', [
    'pretrain/deit3_small_in1k_400e.py', 'pretrain/mae_vit_tiny12h_in1k_400e.py',
    'pretrain/mocov3_vit_tiny12h_in1k_400e.py', 'pretrain/patchconvnet_s60_in1k.py',
    'finetune/mae_lite_vit_tiny12h_ft_300e.py', 'finetune/deit3_base_attn_ft384.py',
    'finetune/mae_vit_tiny12h_linprobe.py', 'upernet_deit3_s.py', 'upernet_resmlp_24.py', 'upernet_cait_s24.py',
    'upernet_patchconvnet_s60.py', 'maskrcnn_deit3_s.py', 'maskrcnn_vit_tiny12h_mae.py'])
def test_every_trainable_parameter_is_in_one_group_with_a_rate_by_the_rule(config):
    """Families ViT, CaiT, ResMLP, PatchConvNet; recipes supervised, MAE, MoCo-v3, fine-tuning with layer decay,
    attention-only, linear probe; UperNet and Mask R-CNN. Under layer-wise decay every backbone parameter's rate
    is d ** (top - its layer) and everything else keeps the base rate."""
    cfg, model, rows = table(config)
    trains = [r for r in rows.values() if r['trains']]
    assert trains and all('group' in r and r['lr'] > 0 for r in trains)
    decay = cfg.optim_wrapper.get('paramwise_cfg', {}).get('layer_decay_rate', 1.0)
    if cfg.optim_wrapper.get('constructor', '').endswith('LayerDecayOptimWrapperConstructor'):
        backbone = backbone_of(model)
        top = backbone.num_layers + 1
        for r in trains:
            inside = r['name'].startswith('backbone.')
            layer = backbone.get_layer_id(r['name'][len('backbone.'):]) if inside else top
            assert r['layer_id'] == layer and r['lr_scale'] == pytest.approx(decay ** (top - layer)), r


def test_supervised_deit3_decays_no_norm_bias_or_embedding_as_timms_optimizer():
    """DeiT III's official code builds AdamW / LAMB with timm's create_optimizer: no weight decay on 1-D
    parameters (norms, biases, LayerScale) and on the model's no_weight_decay() names (pos_embed, cls_token)."""
    cfg, model, rows = table('pretrain/deit3_small_in1k_400e.py')
    skip = {f'backbone.{n}' for n in model.backbone.no_weight_decay()}
    for name, r in rows.items():
        expected = 0.0 if len(r['shape']) <= 1 or name in skip else cfg.optim_wrapper.optimizer.weight_decay
        assert r['weight_decay'] == expected, name


def test_mocov3_decays_every_parameter_and_trains_no_momentum_encoder():
    """MoCo-v3's main_moco.py: AdamW over model.parameters() with one weight decay; the momentum encoder (in the
    optimiser, as there, but without gradients) follows by EMA, and the sin-cos position embedding is fixed."""
    cfg, _, rows = table('pretrain/mocov3_vit_tiny12h_in1k_400e.py')
    trains = [r for r in rows.values() if r['trains']]
    assert {r['weight_decay'] for r in trains} == {cfg.optim_wrapper.optimizer.weight_decay}
    frozen = [n for n, r in rows.items() if not r['trains']]
    assert frozen and all(n.startswith('momentum_encoder.') or n.endswith('pos_embed') for n in frozen)
    assert 'backbone.pos_embed' in frozen and len(frozen) + len(trains) == len(rows)


def test_partial_fine_tunes_train_what_their_mode_says():
    _, _, attn = table('finetune/deit3_base_attn_ft384.py')
    trains = {n for n, r in attn.items() if r['trains']}
    assert trains == {n for n in attn if '.attn.' in n} | {'backbone.pos_embed', 'backbone.head.weight',
                                                             'backbone.head.bias'}
    _, _, probe = table('finetune/mae_vit_tiny12h_linprobe.py')
    assert {n for n, r in probe.items() if r['trains']} == {'backbone.head.weight', 'backbone.head.bias'}


def test_a_trainable_parameter_outside_every_group_stops_the_run():
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2))
    optimizer = torch.optim.SGD(model[0].parameters(), lr=0.1)
    with pytest.raises(ValueError, match=r'2 trainable parameter\(s\) in no optimiser group, which would not train: '
                                         r'1\.weight, 1\.bias'):
        param_table(model, {'optimizer': optimizer})


def test_a_training_writes_its_table_beside_result_json(tmp_path):
    """tools/train.py adds ParamTableHook: the supervised demo recipe's run has param_groups.json, its rows the
    model's parameters with the recipe's rate (before warm-up) and weight decay."""
    import json
    import subprocess
    import sys

    from harness import demo_data
    datasets = demo_data.select(['imagenet', 'imagenet_v2', 'imagenet_real'])
    assert demo_data.generate(datasets, str(tmp_path / 'data' / 'demo'), scale='tiny', log=lambda m: None) == []
    options = [f'{loader}.{key}' for loader in ('train_dataloader', 'val_dataloader')
               for key in ('num_workers=0', 'persistent_workers=False', 'batch_size=8')]
    # 2 iterations: the warm-up of one epoch reaches the peak (at 1 it would be refused: tools/train.py's lr curve)
    options += ['train_dataloader.dataset.indices=16', 'val_dataloader.dataset.indices=8', 'train_cfg.max_epochs=1',
                'train_cfg.val_interval=1', 'experiment.pretrain.epochs=1']
    done = subprocess.run([sys.executable, str(REPO / 'tools' / 'train.py'), 'configs/demo/sup_demo.py',
                           '--work-dir', str(tmp_path / 'work'), '--cfg-options', *options], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    rows = json.loads((tmp_path / 'work' / 'param_groups.json').read_text())
    assert (tmp_path / 'work' / 'result.json').is_file()
    cfg = Config.fromfile(REPO / 'configs/demo/sup_demo.py')
    base = cfg.optim_wrapper.optimizer
    assert all(r['lr'] == pytest.approx(base.lr) and r['trains'] for r in rows)
    assert {r['weight_decay'] for r in rows} == {0.0, base.weight_decay}
    by_name = {r['name']: r for r in rows}
    assert by_name['backbone.blocks.0.norm1.weight']['weight_decay'] == 0.0
    assert by_name['backbone.blocks.0.attn.qkv.weight']['shape'] == [576, 192]
