"""``forward_intermediates`` of the suite's models has timm's signature and meaning: the same weights loaded into
timm's model and ours give the same tensors for every argument of timm's (indices as None, an int: the last n
blocks, a list; ``norm``; ``output_fmt`` NCHW / NLC; ``stop_early``; ``intermediates_only``), and the index rule
is timm's ``feature_take_indices``. timm is the independent reference; PatchConvNet, which timm lacks, is checked
against its trunk run by hand in tests/test_block_walk.py."""
import inspect

import pytest
import torch
from timm.models._features import feature_take_indices

from _backbone_helpers import timm_model, timm_resmlp
from backbones import create_model
from backbones.block_walk import BlockWalkMixin, take_indices

# our variant, the reference's builder, the overrides both are built with
CASES = {
    'deit3': ('deit3_small_patch16_224', lambda: timm_model('deit3_small_patch16_224', depth=3, img_size=64)),
    'distilled': ('deit_tiny_distilled_patch16_224',  # two prefix tokens, both stripped
                  lambda: timm_model('deit_tiny_distilled_patch16_224', depth=3, img_size=64)),
    'cait': ('cait_xxs24_224', lambda: timm_model('cait_xxs24_224', depth=3, img_size=64)),  # final: class attention
    'resmlp': ('resmlp_24', lambda: timm_resmlp(384, depth=3, img_size=64)),
}
ARGUMENTS = [dict(indices=None), dict(indices=2), dict(indices=1, norm=True), dict(indices=[0, 2]),
             dict(indices=[2, -3], norm=True), dict(indices=[0], stop_early=True),
             dict(indices=[-2, 0], stop_early=True, norm=True)]


@pytest.fixture(scope='module', params=list(CASES))
def pair(request, tmp_path_factory):
    """(timm's model, ours with its weights), both in eval mode."""
    arch, reference = CASES[request.param]
    ref = reference()
    path = tmp_path_factory.mktemp(request.param) / 'weights.pth'
    torch.save(ref.state_dict(), path)
    ours = create_model(arch, depth=3, img_size=64, checkpoint=str(path)).eval()
    return ref, ours


@pytest.mark.parametrize('output_fmt', ['NCHW', 'NLC'])
@pytest.mark.parametrize('kwargs', ARGUMENTS, ids=lambda k: ','.join(f'{a}={v}' for a, v in k.items()).replace(' ', ''))
def test_outputs_equal_timms(pair, kwargs, output_fmt):
    ref, ours = pair
    x = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        final, maps = ours.forward_intermediates(x, output_fmt=output_fmt, **kwargs)
        ref_final, ref_maps = ref.forward_intermediates(x, output_fmt=output_fmt, **kwargs)
        only = ours.forward_intermediates(x, output_fmt=output_fmt, intermediates_only=True, **kwargs)
        ref_only = ref.forward_intermediates(x, output_fmt=output_fmt, intermediates_only=True, **kwargs)
    assert isinstance(maps, list) and len(maps) == len(ref_maps) and len(only) == len(ref_only) == len(maps)
    for got, expected in zip(maps + only, ref_maps + ref_only):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(final, ref_final, rtol=1e-5, atol=1e-5)
    if output_fmt == 'NCHW':
        assert maps[0].shape[-2:] == (4, 4)
    if not kwargs.get('stop_early'):  # the final features over every block are forward_features'
        with torch.no_grad():
            torch.testing.assert_close(final, ours.forward_features(x))


def test_an_int_is_the_last_n_blocks_in_block_order():
    model = create_model('vit_demo_patch8_64', num_classes=0).eval()
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        every = model.forward_intermediates(x, intermediates_only=True)
        last_two = model.forward_intermediates(x, 2, intermediates_only=True)
        listed = model.forward_intermediates(x, [5, 4, 5], intermediates_only=True)  # one per block, in block order
    assert len(every) == 6
    for got, expected in zip(last_two, every[4:]):
        assert torch.equal(got, expected)
    assert len(listed) == 2 and all(torch.equal(a, b) for a, b in zip(listed, every[4:]))


def test_the_index_rule_is_timms():
    for depth in (1, 6):
        for indices in [None, 1, depth, [0], [-1], [depth - 1, 0, -1], (0, 0)]:
            assert take_indices(indices, depth) == feature_take_indices(depth, indices), (indices, depth)
    with pytest.raises(ValueError, match=r'indices=7: an int takes the last n blocks, n from 1 to 6'):
        take_indices(7, 6)
    with pytest.raises(ValueError, match='indices=0: an int takes the last n blocks'):
        take_indices(0, 6)
    with pytest.raises(ValueError, match='out index 6 is out of range for a model with 6 blocks'):
        take_indices([6], 6)
    with pytest.raises(ValueError, match="output_fmt='NHWC': expected 'NCHW' or 'NLC'"):
        create_model('vit_demo_patch8_64', depth=1).forward_intermediates(torch.randn(1, 3, 64, 64), output_fmt='NHWC')


def test_the_signature_is_timms():
    """The arguments of timm's CaiT / MlpMixer (its ViT adds prefix-token and mask options), with their defaults."""
    from timm.models.cait import Cait
    theirs = inspect.signature(Cait.forward_intermediates).parameters
    ours = inspect.signature(BlockWalkMixin.forward_intermediates).parameters
    assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()]
