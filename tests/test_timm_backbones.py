"""Any timm model as a backbone (``timm:NAME``, backbones/timm_backbones.py), on every task, on timm's tiny test
models (random init; nothing downloads): its outputs are timm's own, its weights come through timm's own loader
(a local file, or the local Hugging Face cache for ``pretrained=True``), the swap lays out UperNet and Mask R-CNN
for a hierarchical and a plain model, and two training iterations of each dense task run."""
import json
from pathlib import Path

import pytest
import timm
import torch
from mmengine.config import Config
from mmengine.optim import build_optim_wrapper
from mmengine.registry import DefaultScope
from safetensors.torch import save_file

import downstream  # noqa: F401  (registers the seg / det glue and the --backbone adapters)
from backbones import TimmBackbone, create_model, family_of
from downstream.backbone_swap import swap_backbone
from test_det_train import coco_root, on_tiny_coco, train  # noqa: F401  (the tiny demo COCO fixture)
from test_seg_train import one_iteration_cfg, tiny_ade  # noqa: F401  (the tiny demo ADE20k fixture)
from harness.experiment.cli import build_runner
from harness.experiment.result_record import backbone_complexity
from vitbench.refusal import RefusalTypeError

REPO = Path(__file__).resolve().parents[1]
HIERARCHICAL, PLAIN = 'test_convnext', 'test_vit'  # timm's own test models: 0.2 M and 0.3 M parameters


def _saved(tmp_path, name, num_classes=0, seed=0):
    """timm's model with seeded random weights, saved as a local file in timm's format."""
    torch.manual_seed(seed)
    model = timm.create_model(name, num_classes=num_classes).eval()
    path = tmp_path / f'{name}.safetensors'
    save_file(model.state_dict(), str(path))
    return model, path


@pytest.mark.parametrize('name', [HIERARCHICAL, PLAIN])
def test_a_local_file_loads_through_timms_loader_to_timms_outputs(tmp_path, name):
    """A classifier from a local file gives timm's outputs; the dense backbone's maps equal those of timm's
    features_only model (FeatureListNet / FeatureGetterNet: another code path) on the same weights."""
    reference, path = _saved(tmp_path, name, num_classes=10)
    model = create_model(f'timm:{name}', num_classes=10, checkpoint=str(path)).eval()
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), rtol=0, atol=0)
    assert model.is_init and model.arch == f'timm:{name}' and family_of(model.arch) == 'timm'

    levels = len(reference.feature_info)
    indices = [0, 1, 2, 3] if name == HIERARCHICAL else [1, 3, 5]
    backbone = TimmBackbone(arch=f'timm:{name}', out_indices=indices, init_cfg=dict(type='Pretrained',
                                                                                   checkpoint=str(path))).eval()
    features = timm.create_model(name, features_only=True, out_indices=indices, pretrained=True,
                                 pretrained_cfg_overlay=dict(file=str(path))).eval()
    with torch.no_grad():
        ours, theirs = backbone(x), features(x)
    assert len(ours) == len(indices) < levels + 1
    for a, b in zip(ours, theirs):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    # what comes after the last map is pruned: no parameter goes unused (DistributedDataParallel)
    (sum(m.float().mean() for m in backbone.train()(x))).backward()
    assert all(p.grad is not None for p in backbone.parameters())


def test_pretrained_comes_from_the_local_hugging_face_cache_or_says_what_is_missing(tmp_path, monkeypatch):
    """pretrained=True reads the weights hf_hub would have cached (its layout, written here), offline; without
    them one line names the repository and what to do."""
    import huggingface_hub.constants as hub
    monkeypatch.setattr(hub, 'HF_HUB_CACHE', str(tmp_path / 'hub'))
    with pytest.raises(FileNotFoundError, match=r"timm/test_vit\.r160_in1k.*not in the local cache.*--checkpoint"):
        create_model(f'timm:{PLAIN}', num_classes=0, pretrained=True)

    reference, _ = _saved(tmp_path, PLAIN, num_classes=1000, seed=3)
    repo = tmp_path / 'hub' / 'models--timm--test_vit.r160_in1k'
    snapshot = repo / 'snapshots' / ('0' * 40)
    snapshot.mkdir(parents=True)
    save_file(reference.state_dict(), str(snapshot / 'model.safetensors'))
    (repo / 'refs').mkdir()
    (repo / 'refs' / 'main').write_text('0' * 40)
    model = create_model(f'timm:{PLAIN}', num_classes=1000, pretrained=True).eval()
    x = torch.randn(1, 3, 160, 160)
    with torch.no_grad():
        torch.testing.assert_close(model(x), reference(x), rtol=0, atol=0)


def test_unknown_names_and_unusable_models_say_so_in_one_line():
    with pytest.raises(KeyError, match=r"unknown timm model 'timm:convnxt_tiny'; did you mean timm:convnext_tiny"):
        create_model('timm:convnxt_tiny')
    with pytest.raises(ValueError, match=r"pretrained=True: the suite's variants load the official files with "
                                         r"checkpoint=PATH"):
        create_model('deit3_small_patch16_224', pretrained=True)
    with pytest.raises(TypeError, match='has no forward_intermediates'):
        TimmBackbone(model=torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match=r'out_indices \[7\]: ConvNeXt has 4 feature levels'):
        TimmBackbone(arch=f'timm:{HIERARCHICAL}', out_indices=[7])


def test_layer_decay_follows_timms_own_grouping():
    """The suite's layer-decay constructor on a timm classifier gives every parameter the learning-rate scale of
    timm's param_groups_layer_decay (its group_matcher), and weight decay as timm: none on 1-D parameters."""
    from timm.optim import param_groups_layer_decay

    class Classifier(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = create_model(f'timm:{PLAIN}', num_classes=5)

    model = Classifier()
    wrapper = build_optim_wrapper(model, dict(
        optimizer=dict(type='AdamW', lr=1.0, weight_decay=0.05),
        constructor='vitbench.LayerDecayOptimWrapperConstructor', paramwise_cfg=dict(layer_decay_rate=0.65)))
    ours = {name[len('backbone.'):]: (group['lr'], group['weight_decay'])
            for group in wrapper.optimizer.param_groups for name in group['param_names']}
    names = {id(p): n for n, p in model.backbone.named_parameters()}
    theirs = {names[id(p)]: (group['lr_scale'], group['weight_decay'])
              for group in param_groups_layer_decay(model.backbone, weight_decay=0.05, layer_decay=0.65,
                                                    no_weight_decay_list=model.backbone.no_weight_decay())
              for p in group['params']}
    assert set(ours) == set(theirs) and len(ours) == len(list(model.parameters()))
    for name, (lr, wd) in ours.items():
        assert lr == pytest.approx(theirs[name][0]) and wd == theirs[name][1], name
    assert ours['blocks.0.attn.qkv.weight'][0] == pytest.approx(0.65 ** 6) and ours['head.weight'][0] == 1.0


def test_the_record_has_params_and_flops_at_timms_input_size():
    record = backbone_complexity(f'timm:{HIERARCHICAL}', {})
    model = timm.create_model(HIERARCHICAL, num_classes=0)
    assert record['params_M'] == pytest.approx(sum(p.numel() for p in model.parameters()) / 1e6)
    assert record['gflops'] and record['gflops'] > 0


def test_the_swap_lays_out_upernet_and_mask_rcnn_by_the_models_maps():
    seg = Config.fromfile(REPO / 'configs/demo/upernet_demo.py')
    swap_backbone(seg, f'timm:{HIERARCHICAL}')  # stages at strides 4-32: straight into UperNet, no neck
    assert seg.model.backbone.type == 'vitbench.TimmBackbone' and seg.model.neck is None
    assert seg.model.backbone.out_indices == [0, 1, 2, 3] and seg.experiment.backbone == f'timm:{HIERARCHICAL}'
    assert seg.model.decode_head.in_channels == [24, 32, 48, 64] and seg.model.decode_head.channels == 64  # demo rule
    plain = Config.fromfile(REPO / 'configs/demo/upernet_demo.py')
    swap_backbone(plain, f'timm:{PLAIN}')  # one stride: the simple pyramid, four blocks spread over the depth
    assert plain.model.neck.embed_dim == 64 and plain.model.backbone.out_indices == [1, 2, 3, 5]
    assert 'window_size' not in plain.model.backbone

    # a paper config's checkpoint is its own backbone's weights: not loaded into a timm model
    paper = Config.fromfile(REPO / 'configs/upernet_deit3_b.py')
    assert paper.model.backbone.init_cfg.checkpoint
    swap_backbone(paper, 'timm:swin_tiny_patch4_window7_224')
    assert paper.model.backbone.init_cfg is None and paper.model.decode_head.in_channels == [96, 192, 384, 768]
    kept = Config.fromfile(REPO / 'configs/upernet_deit3_b.py')
    swap_backbone(kept, f'timm:{HIERARCHICAL}', checkpoint=__file__)  # --checkpoint: that file
    assert kept.model.backbone.init_cfg == dict(type='Pretrained', checkpoint=__file__)

    det = Config.fromfile(REPO / 'configs/demo/maskrcnn_demo.py')
    swap_backbone(det, f'timm:{HIERARCHICAL}')
    assert det.model.neck == dict(type='FPN', in_channels=[24, 32, 48, 64], out_channels=64, num_outs=5)
    vit = Config.fromfile(REPO / 'configs/demo/maskrcnn_demo.py')
    swap_backbone(vit, f'timm:{PLAIN}')  # ViTDet's pyramid from the last map, global attention (no windows)
    assert vit.model.neck.type == 'vitbench.SimpleFeaturePyramid' and vit.model.neck.in_channels == 64
    assert vit.model.backbone.out_indices == [5] and 'global_attn_indexes' not in vit.model.backbone


@pytest.mark.parametrize('name', [HIERARCHICAL, PLAIN])
def test_upernet_trains_two_iterations(tiny_ade, tmp_path, name):  # noqa: F811
    cfg = one_iteration_cfg(tiny_ade, tmp_path, backbone=f'timm:{name}')
    cfg.train_cfg.max_iters = cfg.train_cfg.val_interval = 2
    cfg.experiment_name = f'seg_timm_{name}'
    build_runner(cfg).train()
    record = json.loads((tmp_path / 'result.json').read_text())
    assert record['backbone'] == f'timm:{name}' and 'mIoU' in record['metrics'] and record['params_M'] > 0


@pytest.mark.filterwarnings('ignore:__array__ implementation:DeprecationWarning')
@pytest.mark.parametrize('name', [HIERARCHICAL, PLAIN])
def test_mask_rcnn_trains_two_iterations(coco_root, tmp_path, name):  # noqa: F811
    record = train(tmp_path, '--backbone', f'timm:{name}', '--cfg-options', *on_tiny_coco(coco_root),
                   f'experiment_name=det_timm_{name}',
                   'train_cfg.max_iters=2', 'train_cfg.val_interval=2', 'default_hooks.checkpoint=None',
                   'param_scheduler.0.end=1', 'param_scheduler.1.end=2', 'param_scheduler.1.milestones=[1]',
                   'model.test_cfg.rcnn.score_thr=0.0', 'model.test_cfg.rcnn.max_per_img=10')
    assert (record['task'], record['backbone']) == ('det', f'timm:{name}')
    assert {'bbox_mAP', 'segm_mAP'} <= set(record['metrics']) and record['metrics']['loss'] > 0


def test_transfer_builds_timms_classifier_with_the_configs_head():
    from vitbench.registry import MODELS
    cfg = Config.fromfile(REPO / 'configs/demo/transfer_cifar10_demo.py')
    swap_backbone(cfg, f'timm:{HIERARCHICAL}')
    with DefaultScope.overwrite_default_scope('vitbench'):
        model = MODELS.build(cfg.model)
    assert type(model.backbone).__name__ == 'ConvNeXt' and model.backbone.num_classes == 10
    loss = model(torch.randn(4, 3, 32, 32), dict(gt_label=torch.arange(4)), mode='loss')
    assert torch.isfinite(sum(loss.values()))


def test_a_pipeline_runs_timm_backbones_and_leaves_out_what_needs_the_suites_vit(tmp_path):
    """--backbones timm:A: per-backbone stages in folders without the colon (a relative link would read it as a URL
    scheme), each swapped with the timm name; masked image modelling left out, saying why."""
    from harness.pipeline.spec import load_pipeline
    pipeline = load_pipeline(str(REPO / 'configs/pipelines/demo.py'), backbones=[f'timm:{PLAIN}'],
                             work_dir=str(tmp_path))
    ids = [s.id for s in pipeline.stages]
    assert f'timm-{PLAIN}/sup' in ids and f'timm-{PLAIN}/upernet_scratch' in ids and not any('mae' in i for i in ids)
    stage = pipeline.stage(f'timm-{PLAIN}/maskrcnn_scratch')
    assert stage.swap == f'timm:{PLAIN}' and stage.work_dir == str(tmp_path / f'timm-{PLAIN}' / 'maskrcnn_scratch')
    assert f'timm:{PLAIN}/mae: left out, it runs on vit backbones, not timm' in pipeline.left_out
    zoo = load_pipeline(str(REPO / 'configs/pipelines/zoo_demo.py'), work_dir=str(tmp_path))
    assert zoo.backbones == [f'timm:{HIERARCHICAL}', f'timm:{PLAIN}'] and len(zoo.stages) == 10


def test_a_model_of_ones_own_registered_in_timm_runs_every_task(tiny_ade, tmp_path):  # noqa: F811
    """Any module with timm's classifier API and forward_intermediates / feature_info, registered with
    @timm.models.register_model (a config imports it with custom_imports), is timm:NAME everywhere: its classifier
    for transfer, its stages into UperNet (two iterations here) and Mask R-CNN's FPN."""
    import _custom_timm_model  # noqa: F401  (what custom_imports = dict(imports=[...]) does in a config)
    name = 'timm:vitbench_test_two_stage'
    classifier = create_model(name, num_classes=10)
    assert classifier(torch.randn(2, 3, 32, 32)).shape == (2, 10)
    det = Config.fromfile(REPO / 'configs/demo/maskrcnn_demo.py')
    swap_backbone(det, name)
    assert det.model.neck.in_channels == [16, 24, 32, 48]
    cfg = one_iteration_cfg(tiny_ade, tmp_path, backbone=name)
    cfg.train_cfg.max_iters = cfg.train_cfg.val_interval = 2
    cfg.experiment_name = 'seg_own_model'
    # it has no group_matcher: the config's layer-wise decay is refused, saying so
    with pytest.raises(RefusalTypeError, match=r'TwoStage defines no group_matcher.*\(set '
                       r'optim_wrapper\.paramwise_cfg\.layer_decay_rate=1\.0\)$'):
        build_runner(cfg).train()
    cfg.optim_wrapper.paramwise_cfg.layer_decay_rate = 1.0
    build_runner(cfg).train()
    record = json.loads((tmp_path / 'result.json').read_text())
    assert record['backbone'] == name and 'mIoU' in record['metrics']
