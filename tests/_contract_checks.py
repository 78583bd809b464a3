"""The checks of the family contract (backbones/contract.py) on one family or one variant:
tests/test_backbone_contract.py runs them over every registered one, tests/test_extending_backbone.py over the family
docs/extending-backbone.md builds."""
import copy
from functools import lru_cache
from pathlib import Path

import pytest
import torch
from mmengine.config import Config
from mmengine.registry import DefaultScope

import downstream  # noqa: F401  (the seg / det glue and the swap's adapters)
from backbones import FAMILIES, create_model, family_record
from backbones.checkpoint import save_checkpoint
from backbones.contract import CAPABILITIES, LAYOUT, contract_gaps
from downstream.backbone_swap import swap_backbone
from downstream.seg.swap import LEVELS, WIDTHS
from pretrain.mae import MAE
from pretrain.mocov3 import MoCoV3
from vitbench.registry import MODELS

DEMO = Path(__file__).resolve().parents[1] / 'configs' / 'demo'


def meta_model(name: str):
    """Variant ``name`` without memory or initialisation (shapes only)."""
    with torch.device('meta'):
        return create_model(name)


@lru_cache(maxsize=None)
def _demo(config: str) -> Config:
    return Config.fromfile(DEMO / config)


def swapped(config: str, name: str) -> Config:
    """A demo config with its backbone swapped to ``name``."""
    cfg = copy.deepcopy(_demo(config))
    swap_backbone(cfg, name)
    return cfg


def one_line(error) -> str:
    message = str(error.value)
    assert '\n' not in message, message
    return message


def check_family(family: str) -> None:
    """The record names a registered dense class of its model class, which meets the contract."""
    record = FAMILIES[family]
    dense = MODELS.get(record.dense_type)
    assert dense is not None, record.dense_type
    if record.model_class is None:  # timm's own models: its record describes their maps, timm builds them
        assert record.describe_maps is not None and not record.variants
        return
    assert contract_gaps(record.model_class) == []
    assert issubclass(dense, record.model_class) and dense.family == family
    assert record.variants and record.upernet_levels in LEVELS and record.upernet_width in WIDTHS


def check_on_meta(name: str) -> None:
    """Variant ``name`` on the meta device against its layout; its dense backbone; its swap into the demo UperNet
    and Mask R-CNN (or their one-line refusal of a patch size their crops and strides do not take)."""
    record, model = family_record(name), meta_model(name)
    layout = record.layout(name)
    assert (model.embed_dim, model.patch_size, model.depth) == tuple(layout[key] for key in LAYOUT)
    assert len(model.blocks) == model.depth and isinstance(model.num_features, int)
    assert isinstance(model.num_prefix_tokens, int) and model.num_prefix_tokens >= 0
    assert model.capabilities <= set(CAPABILITIES)
    assert ('attention' in model.capabilities) == model.block_attention
    assert ('keep' in model.capabilities) == model.supports_keep
    ids = [model.get_layer_id(n) for n, _ in model.named_parameters()]  # layer decay knows every parameter
    assert min(ids) == 0 and max(ids) == model.num_layers + 1 and model.num_layers >= model.depth
    with torch.device('meta'):
        dense = MODELS.build(dict(type=record.dense_type, arch=name))
    assert isinstance(dense, record.model_class) and dense.out_indices == [model.depth - 1]

    dim, patch, depth = (layout[key] for key in LAYOUT)
    if patch not in (8, 16):  # the demo's 128 crops and the simple pyramid's strides take these
        for config in ('upernet_demo.py', 'maskrcnn_demo.py'):
            with pytest.raises(ValueError, match=f'{patch}x{patch} patches|patch size {patch}') as error:
                swapped(config, name)
            one_line(error)
        return
    seg = swapped('upernet_demo.py', name)
    assert (seg.model.backbone.type, seg.model.backbone.arch) == (f'vitbench.{record.dense_type}', name)
    assert seg.model.backbone.out_indices == LEVELS[record.upernet_levels](depth)
    assert seg.model.neck.embed_dim == dim and seg.model.decode_head.in_channels == [dim] * 4
    assert seg.model.decode_head.channels == seg.model.auxiliary_head.channels == 64  # the demo protocol's rule
    by_width = copy.deepcopy(_demo('upernet_demo.py'))  # under a 'by_width' rule: the record's width rule
    by_width.experiment.protocol.heads.decode_head = 'by_width'
    swap_backbone(by_width, name)
    assert by_width.model.decode_head.channels == WIDTHS[record.upernet_width](dim)
    det = swapped('maskrcnn_demo.py', name)
    assert det.model.backbone.type == f'vitbench.{record.dense_type}' and det.model.backbone.out_indices == [depth - 1]
    assert det.model.neck.in_channels == dim and det.model.neck.scales == [patch / 4, patch / 8, patch / 16, patch / 32]
    assert ('window_size' in det.model.backbone) == record.windowed


def _sizes(name: str):
    """A non-square input of 4 x 3 patches, and the img_size to build the variant with (fixed grids: that input)."""
    record = family_record(name)
    patch = record.layout(name)['patch_size']
    size = (4 * patch, 3 * patch)
    return size, dict(img_size=list(size) if record.fixed_grid else 4 * patch)


def check_runs(name: str, tmp_path: Path) -> None:
    """Variant ``name`` built and run: classifier, features, the walk, dense maps, attention maps, a checkpoint round
    trip, an MAE and a MoCo-v3 loss step where its capabilities allow (else the one-line refusal naming one)."""
    record = family_record(name)
    (H, W), build = _sizes(name)
    torch.manual_seed(0)
    model = create_model(name, num_classes=5, **build).eval()
    x = torch.randn(2, 3, H, W)
    tokens = model.num_prefix_tokens + 12
    with torch.no_grad():
        logits, features, hidden = model(x), model.forward_features(x), list(model.iter_hidden(x))
        torch.testing.assert_close(model.forward_head(features), logits)
        assert model.forward_head(features, pre_logits=True).shape == (2, model.num_features)
    assert logits.shape == (2, 5) and features.shape[0] == 2 and features.shape[-1] == model.num_features
    assert [h.index for h in hidden] == list(range(model.depth + 1))
    assert all(h.tokens.shape == (2, tokens, model.embed_dim) and h.grid == (4, 3) for h in hidden)
    assert hidden[-1].map().shape == (2, model.embed_dim, 4, 3)

    dense = MODELS.build(dict(type=record.dense_type, arch=name, out_indices=[0, model.depth - 1], **build)).eval()
    with torch.no_grad():
        assert [tuple(m.shape) for m in dense(x)] == [(2, model.embed_dim, 4, 3)] * 2
    if model.block_attention:
        (attn,) = model.forward_attention(x, [model.depth - 1])
        assert attn.shape == (2, model.attention_heads(model.depth - 1), tokens, tokens)
        assert torch.isfinite(attn).all()  # (CaiT's talking heads mix the heads after the softmax: no row sums to 1)
    else:
        with pytest.raises(ValueError, match='its blocks have no attention maps'):
            list(model.iter_hidden(x, attn_indices=[0]))

    path = save_checkpoint(str(tmp_path / 'backbone.pth'), model, overrides=dict(num_classes=5, **build))
    with torch.no_grad():
        assert torch.equal(create_model(name, num_classes=5, checkpoint=path, **build).eval()(x), logits)

    views = torch.randn(2, 2, 3, H, W)
    for recipe, build_recipe, batch in (
            (MAE, lambda: MAE(dict(arch=name, **build), decoder=dict(embed_dim=16, depth=1, num_heads=2)), x),
            (MoCoV3, lambda: MoCoV3(dict(arch=name, **build), dim=8, mlp_dim=16), views)):
        lacking = [need for need in recipe.needs if need not in model.capabilities]
        if lacking:
            with pytest.raises(ValueError, match=f"needs the capability '{lacking[0]}' ") as error:
                build_recipe()
            assert one_line(error).endswith(f'which {type(model).__name__} lacks')
            continue
        wrapper = build_recipe()
        loss = wrapper.loss(batch)['loss']
        loss.backward()
        assert torch.isfinite(loss) and any(p.grad is not None for p in wrapper.backbone.parameters()), recipe.__name__


def check_dense_tasks(name: str) -> None:
    """Variant ``name`` swapped into the demo UperNet and Mask R-CNN: their backbone and neck built and run."""
    from mmdet.registry import MODELS as DET
    from mmseg.registry import MODELS as SEG
    dim, patch = (family_record(name).layout(name)[key] for key in ('embed_dim', 'patch_size'))
    x, grid = torch.randn(1, 3, 64, 64), 64 // patch
    seg = swapped('upernet_demo.py', name)
    with DefaultScope.overwrite_default_scope('mmseg'), torch.no_grad():
        backbone, neck = SEG.build(seg.model.backbone).eval(), SEG.build(seg.model.neck).eval()
        maps = neck(backbone(x))
    assert [tuple(m.shape) for m in maps] == [(1, dim, int(grid * s), int(grid * s)) for s in (4, 2, 1, .5)]
    det = swapped('maskrcnn_demo.py', name)
    with DefaultScope.overwrite_default_scope('mmdet'), torch.no_grad():
        backbone, neck = DET.build(det.model.backbone).eval(), DET.build(det.model.neck).eval()
        maps = neck(backbone(x))
    assert [tuple(m.shape[-2:]) for m in maps] == [(16, 16), (8, 8), (4, 4), (2, 2), (1, 1)]
    assert {m.shape[1] for m in maps} == {det.model.neck.out_channels}
