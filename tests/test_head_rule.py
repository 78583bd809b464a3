"""One source for the widths of the dense tasks' heads and necks: the protocol's head rule
(``experiment.protocol.heads``, downstream/head_rule.py), applied to every run, its config's own backbone and a
``--backbone`` swap alike, and recorded in the protocol's digest."""
import argparse
import copy
import importlib.util
from pathlib import Path

import pytest
from mmengine.config import Config

import downstream  # noqa: F401  (registers the seg / det glue)
from downstream.backbone_swap import head_rule_mismatches, head_widths, swap_backbone
from harness.experiment.cli import ConfigError, load_config
from harness.experiment.protocol import protocol_of
from harness.pipeline.command import command_of
from harness.pipeline.spec import load_pipeline

REPO = Path(__file__).resolve().parents[1]
DENSE = sorted(str(p.relative_to(REPO))
               for pattern in ('configs/upernet_*.py', 'configs/semfpn_*.py', 'configs/maskrcnn_*.py')
               for p in REPO.glob(pattern)) + ['configs/demo/upernet_demo.py', 'configs/demo/maskrcnn_demo.py']
DEMO_VIT = 'vit_demo_patch8_64'


def load(path: str) -> Config:
    return Config.fromfile(REPO / path)


def swapped(path: str, name: str) -> Config:
    cfg = load(path)
    swap_backbone(cfg, name)
    return cfg


def loaded(path: str, *options: str, backbone=None) -> Config:
    """The config as tools/train.py loads it (``--cfg-options`` as on its command line)."""
    args = argparse.Namespace(config=str(REPO / path), backbone=backbone, work_dir='work_dirs/unused',
                              launcher='none', local_rank=0, imports=[], cfg_options=None)
    if options:
        args.cfg_options = {k: v for k, v in (o.split('=', 1) for o in options)}
        args.cfg_options = {k: int(v) if v.isdigit() else v for k, v in args.cfg_options.items()}
    return load_config(args)


@pytest.mark.parametrize('path', DENSE)
def test_every_dense_config_states_a_rule_and_has_the_widths_it_gives(path):
    cfg = load(path)
    assert head_widths(cfg), f'{path} states no head rule (experiment.protocol.heads)'
    assert head_rule_mismatches(cfg) == []


@pytest.mark.parametrize('path', DENSE)
def test_swapping_to_the_configs_own_backbone_changes_nothing(path):
    cfg = load(path)
    own = copy.deepcopy(cfg)
    swap_backbone(own, cfg.experiment.backbone)
    assert own.to_dict() == cfg.to_dict()


def _upernet(cfg: Config):
    return cfg.model.decode_head.channels, cfg.model.auxiliary_head.channels


def _mask_rcnn(cfg: Config):
    return cfg.model.neck.out_channels, cfg.model.roi_head.bbox_head.fc_out_channels


XCIT = 'configs/upernet_deit3_b.py'           # upernet_xcit160k: 'by_width' (DeiT III thesis §6.3.5.2)
BEIT = 'configs/upernet_vit_tiny12h_mae.py'   # upernet_beit160k: 'embed_dim' (BEiT's configs)
VITDET = 'configs/maskrcnn_deit3_b.py'        # maskrcnn_vitdet100e: 256 / 1024 (ViTDet's)


@pytest.mark.parametrize('config,name,widths', [
    # thesis Table 6.12's UperNets: 512 for ViT-B and -L, 384 for ViT-S ("the size of their working dimension")
    (XCIT, 'deit3_small_patch16_224', (384, 256)), (XCIT, 'deit3_base_patch16_224', (512, 256)),
    (XCIT, 'deit3_large_patch16_224', (512, 256)), (XCIT, 'cait_s24_224', (384, 256)),
    # PatchConvNet: Table 5.3's 512-channel UperNets from S up
    ('configs/upernet_patchconvnet_s60.py', 'patchconvnet_s60', (512, 256)),
    ('configs/upernet_patchconvnet_s60.py', 'patchconvnet_b120', (512, 256)),
    # a timm hierarchical model by its last map (768): 512, as XCiT's and Swin's own UperNet configs
    (XCIT, 'timm:swin_tiny_patch4_window7_224', (512, 256)),
    # BEiT: upernet_beit_base_12_512_slide_160k_ade20k_pt2ft.py 768, the large one 1024; MAE-lite's Tiny 192
    (BEIT, 'vit_tiny12h_patch16_224', (192, 256)), (BEIT, 'deit3_small_patch16_224', (384, 256)),
    (BEIT, 'deit3_base_patch16_224', (768, 256)), (BEIT, 'deit3_large_patch16_224', (1024, 256)),
    # ViTDet: 256-channel pyramid and heads, a 1024-wide box fc, for every backbone (B, L, H alike)
    (VITDET, 'deit3_small_patch16_224', (256, 1024)), (VITDET, 'deit3_large_patch16_224', (256, 1024)),
    (VITDET, 'cait_s24_224', (256, 1024)), (VITDET, 'timm:swin_tiny_patch4_window7_224', (256, 1024)),
    ('configs/maskrcnn_vit_tiny12h_mae.py', 'vit_tiny12h_patch16_224', (256, 1024)),
])
def test_the_rules_give_the_papers_widths(config, name, widths):
    cfg = swapped(config, name)
    assert (_mask_rcnn(cfg) if cfg.experiment.task == 'det' else _upernet(cfg)) == widths
    assert head_rule_mismatches(cfg) == []


def test_the_digest_records_the_rule_not_the_widths_it_gives():
    base = protocol_of(load(XCIT))
    assert protocol_of(load('configs/upernet_deit3_s.py')) == base  # 384 channels by the same rule
    for rule in ('embed_dim', 512):
        other = load(XCIT)
        other.experiment.protocol.heads.decode_head = rule
        assert protocol_of(other)['name'] == base['name'] and protocol_of(other)['digest'] != base['digest']
    fixed = load('configs/demo/upernet_demo.py')
    digest = protocol_of(fixed)['digest']
    fixed.merge_from_dict({'experiment.protocol.heads.auxiliary_head': 128})
    assert protocol_of(fixed)['digest'] != digest
    det = load(VITDET)
    det.merge_from_dict({'experiment.protocol.heads.pyramid': 128})
    assert protocol_of(det)['digest'] != protocol_of(load(VITDET))['digest']


def test_tools_train_applies_the_rule_and_refuses_widths_against_it(tmp_path):
    cfg = loaded('configs/demo/upernet_demo.py', 'experiment.protocol.heads.decode_head=by_width')
    assert _upernet(cfg) == (192, 64)  # the changed rule, for the demo ViT's width 192
    with pytest.raises(ConfigError) as error:
        loaded('configs/demo/upernet_demo.py', 'model.decode_head.channels=128')
    message = str(error.value)
    assert '\n' not in message and 'model.decode_head.channels=128 (the rule gives 64)' in message
    assert 'change the rule' in message
    with pytest.raises(ConfigError, match=r'the rule gives 64'):  # a swap would overwrite it: refused too
        loaded('configs/demo/upernet_demo.py', 'model.decode_head.channels=128', backbone='deit3_small_patch16_224')
    mine = tmp_path / 'my_upernet.py'  # a config whose hand-set width is not its protocol's rule's
    mine.write_text(f"_base_ = ['{REPO / XCIT}']\nmodel = dict(decode_head=dict(channels=256))\n")
    with pytest.raises(ConfigError) as error:
        loaded(str(mine))
    assert "the config sets model.decode_head.channels=256 (the rule gives 512)" in str(error.value)
    with pytest.raises(ConfigError, match=r"experiment.protocol.heads.decode_head is 'by_size', expected a number "
                                          r"of channels or one of \['by_width', 'embed_dim'\]"):
        loaded('configs/demo/upernet_demo.py', 'experiment.protocol.heads.decode_head=by_size')


def _train_tool():
    spec = importlib.util.spec_from_file_location('vitbench_train_tool', REPO / 'tools' / 'train.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_zoo_boards_heads_follow_one_rule(tmp_path):
    """configs/pipelines/zoo_demo.py with the demo ViT among its backbones: its own config unswapped, the timm models
    swapped; every stage's config as tools/train.py resolves it has the demo protocol's widths and digest."""
    pipeline = load_pipeline(str(REPO / 'configs/pipelines/zoo_demo.py'), work_dir=str(tmp_path),
                             backbones=['timm:test_convnext', 'timm:test_vit', DEMO_VIT])
    train = _train_tool()
    seen, checked = {}, 0
    for stage in pipeline.stages:
        if stage.kind != 'train' or stage.task not in ('seg', 'det'):
            continue
        assert (stage.swap is None) == (stage.backbone == DEMO_VIT)
        cfg = load_config(train.parse_args(command_of(pipeline, stage)[2:]))
        assert cfg.experiment.backbone == stage.backbone
        widths = _mask_rcnn(cfg) if stage.task == 'det' else _upernet(cfg)
        seen.setdefault(stage.task, set()).add((widths, protocol_of(cfg)['digest']))
        checked += 1
    assert checked == 6  # UperNet and Mask R-CNN for each of the three backbones
    assert {task: {w for w, _ in found} for task, found in seen.items()} == {'seg': {(64, 64)}, 'det': {(64, 256)}}
    assert all(len(found) == 1 for found in seen.values()), seen  # one digest per task: one rule
