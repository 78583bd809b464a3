"""The backbone export also as safetensors: a training's BackboneExportHook writes backbone.safetensors beside
backbone.pth, with bit-identical tensors, and a backbone built from it through the suite's loader computes what the
one built from backbone.pth computes, for every family."""
import json
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from safetensors import safe_open

import pretrain  # noqa: F401  (registers the recipes the config builds)
from backbones import create_model, save_checkpoint
from backbones.checkpoint import load_checkpoint, read_checkpoint
from backbones.checkpoint.io import safetensors_path, save_safetensors
from harness import demo_data
from harness.experiment.cli import build_runner
from pretrain.export import origin_of

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.usefixtures('vitbench_scope')


def assert_same_tensors(pth: Path, safetensors: Path) -> dict:
    """Every tensor of the .pth's state dict in the .safetensors file, with its dtype, shape and bytes; returns
    the safetensors header metadata."""
    state = torch.load(pth, map_location='cpu', weights_only=True)['state_dict']
    with safe_open(str(safetensors), framework='pt') as f:
        assert sorted(f.keys()) == sorted(state)
        for key, tensor in state.items():
            copy = f.get_tensor(key)
            assert copy.dtype == tensor.dtype and copy.shape == tensor.shape, key
            assert torch.equal(copy.view(-1).view(torch.uint8), tensor.contiguous().view(-1).view(torch.uint8)), key
        return f.metadata()


def test_a_training_exports_both_files(tmp_path_factory):
    root = tmp_path_factory.mktemp('demo')
    assert demo_data.generate(demo_data.select(['imagenet']), str(root), scale='tiny', log=lambda m: None) == []
    cfg = Config.fromfile(str(REPO / 'configs' / 'demo' / 'sup_demo.py'))
    for loader in ('train_dataloader', 'val_dataloader'):
        cfg.merge_from_dict({f'{loader}.dataset.data_root': str(root / 'imagenet'), f'{loader}.num_workers': 0,
                             f'{loader}.persistent_workers': False, f'{loader}.dataset.indices': 8,
                             f'{loader}.batch_size': 8})
    cfg.merge_from_dict({'train_cfg.max_epochs': 1, 'train_cfg.val_interval': 1, 'default_hooks.checkpoint': None})
    cfg.val_cfg.extra_sets = []  # no ImageNet-V2 / ReaL evaluation after the validation
    work_dir = tmp_path_factory.mktemp('run')
    cfg.work_dir = str(work_dir)
    build_runner(cfg).train()  # one iteration of 8 images, then the export

    pth, safetensors = work_dir / 'backbone.pth', work_dir / 'backbone.safetensors'
    assert pth.is_file() and safetensors.is_file()
    header = assert_same_tensors(pth, safetensors)
    exported = torch.load(pth, map_location='cpu', weights_only=True)
    assert header['vitbench_backbone'] == '1' and json.loads(header['arch']) == exported['arch']
    assert json.loads(header['overrides']) == exported['overrides']
    assert json.loads(header['meta'])['pretrain'] == exported['meta']['pretrain']  # provenance travels too
    # a downstream run from either file records the same pre-training and device-hours (result.json, leaderboard row)
    origins = [origin_of({}, Config(dict(model=dict(backbone=dict(init_cfg=dict(type='Pretrained',
                                                                              checkpoint=str(path)))))))
               for path in (pth, safetensors)]
    (from_pth, hours), (from_safetensors, same_hours) = origins
    assert from_pth['recipe'] == 'supervised' and hours > 0 and same_hours == hours
    assert dict(from_safetensors, checkpoint=None) == dict(from_pth, checkpoint=None)
    # what a downstream config does with the file: the loader, from either (features: the export has no head)
    models = [create_model(exported['arch'], checkpoint=str(path), **exported['overrides']).eval()
              for path in (pth, safetensors)]
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        assert torch.equal(models[0].forward_features(x), models[1].forward_features(x))


def randomize(model: torch.nn.Module) -> torch.nn.Module:
    """Values unlike any initialisation (zeros, ones, LayerScale's 1e-5), so that a tensor left unloaded shows."""
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for tensor in model.state_dict().values():
            if tensor.is_floating_point():
                tensor.copy_(torch.randn(tensor.shape, generator=generator) * 0.02)
    return model


@pytest.mark.parametrize('arch, overrides, size', [
    ('vit_demo_patch8_64', dict(global_pool='avg', img_size=32), 32),
    ('deit_tiny_distilled_patch16_224', dict(depth=2, img_size=64), 64),  # class and distillation tokens
    ('cait_xxs24_224', dict(depth=2, img_size=64), 64),                   # class-attention blocks, LayerScale
    ('resmlp_demo_patch8_64', {}, 64),
    ('patchconvnet_demo_64', {}, 64),
])
def test_every_family_loads_the_same_from_either_file(tmp_path, arch, overrides, size):
    model = randomize(create_model(arch, **overrides)).eval()
    pth = Path(save_checkpoint(tmp_path / 'backbone.pth', model, overrides=overrides, safetensors=True))
    safetensors = Path(safetensors_path(pth))
    assert safetensors == tmp_path / 'backbone.safetensors'
    assert_same_tensors(pth, safetensors)
    assert not list(tmp_path.glob('.*.tmp'))  # both written through the atomic writer
    loaded = create_model(arch, **overrides).eval()
    report = load_checkpoint(loaded, str(safetensors))  # strict: every key of the model, nothing left over
    assert report is not None
    x = torch.randn(2, 3, size, size)
    with torch.no_grad():
        assert torch.equal(loaded(x), model(x))


def test_tensors_sharing_storage_are_written_apart(tmp_path):
    weight = torch.randn(4, 4)
    obj = {'vitbench_backbone': 1, 'arch': None, 'overrides': {}, 'meta': {},
           'state_dict': {'embed.weight': weight, 'head.weight': weight, 'first_row': weight[0]}}
    path = save_safetensors(str(tmp_path / 'tied.safetensors'), obj)
    back = read_checkpoint(path)
    assert set(back) == {'embed.weight', 'head.weight', 'first_row'}
    assert all(torch.equal(back[k], v) for k, v in obj['state_dict'].items())
