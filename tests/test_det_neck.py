"""The simple feature pyramid (downstream/det): strides and widths of its levels, its LayerNorm, its errors."""
import pytest
import torch
import torch.nn.functional as F

from downstream.det import LayerNorm2d, SimpleFeaturePyramid
from vitbench.registry import MODELS


@pytest.mark.parametrize('patch, scales', [(16, (4, 2, 1, 0.5)), (8, (2, 1, 0.5, 0.25))])
def test_levels_have_strides_4_to_64_and_out_channels(patch, scales):
    neck = MODELS.build(dict(type='vitbench.SimpleFeaturePyramid', in_channels=48, out_channels=32, scales=scales))
    image = (256, 192)
    x = torch.randn(2, 48, image[0] // patch, image[1] // patch)  # a backbone's stride-`patch` map
    outs = neck((torch.randn(1), x))                             # only the last map is read
    assert [o.shape[1] for o in outs] == [32] * 5
    strides = [(image[0] // o.shape[2], image[1] // o.shape[3]) for o in outs]
    assert strides == [(4, 4), (8, 8), (16, 16), (32, 32), (64, 64)]
    outs[0].sum().backward()
    assert neck.levels[0][1].conv.weight.grad is not None


def test_levels_are_deconv_identity_maxpool_then_normalised_convs():
    neck = SimpleFeaturePyramid(in_channels=64, out_channels=16)
    up4, up2, same, down2 = (level[0] for level in neck.levels)
    assert [type(m).__name__ for m in up4] == ['ConvTranspose2d', 'LayerNorm2d', 'GELU', 'ConvTranspose2d']
    assert (up4[0].out_channels, up4[3].out_channels, up2.out_channels) == (32, 16, 32)  # width halves per 2x
    assert isinstance(same, torch.nn.Identity) and isinstance(down2, torch.nn.MaxPool2d)
    conv1x1, conv3x3 = neck.levels[0][1], neck.levels[0][2]
    assert conv1x1.conv.kernel_size == (1, 1) and conv3x3.conv.kernel_size == (3, 3)
    assert isinstance(conv1x1.ln, LayerNorm2d) and conv1x1.conv.bias is None  # LN replaces the bias
    assert not conv1x1.with_activation and not conv3x3.with_activation        # as detectron2's ViTDet
    x = torch.randn(1, 64, 4, 4)
    torch.testing.assert_close(neck((x,))[4], F.max_pool2d(neck((x,))[3], 1, stride=2))  # the extra level


def test_layernorm2d_normalises_each_pixel_over_channels():
    norm = LayerNorm2d(8)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-1, 1)
    x = torch.randn(2, 8, 5, 3)
    expected = F.layer_norm(x.permute(0, 2, 3, 1), (8,), norm.weight, norm.bias, eps=1e-6).permute(0, 3, 1, 2)
    torch.testing.assert_close(norm(x), expected)
    assert MODELS.get('vitbench.LN2d') is LayerNorm2d


def test_bad_arguments_name_what_was_expected():
    with pytest.raises(ValueError, match=r'scales \[3.0\] are not supported'):
        SimpleFeaturePyramid(in_channels=32, scales=(4, 3, 1, 0.5))
    with pytest.raises(ValueError, match='finest level to the coarsest'):
        SimpleFeaturePyramid(in_channels=32, scales=(0.5, 1, 2, 4))
    neck = SimpleFeaturePyramid(in_channels=32, out_channels=8)
    with pytest.raises(ValueError, match=r'in_channels=32 .* got \(1, 48, 4, 4\)'):
        neck((torch.randn(1, 48, 4, 4),))


def test_levels_are_contiguous_so_mmcv_roi_align_reads_them_right():
    """mmcv's RoIAlign indexes its input's memory as NCHW whatever the strides: the channels-last view a
    permuting LayerNorm leaves was pooled as garbage (the box head then learnt nothing)."""
    roi_align = pytest.importorskip('mmcv.ops').roi_align
    neck = SimpleFeaturePyramid(in_channels=32, out_channels=16).eval()
    with torch.no_grad():
        outs = neck((torch.randn(2, 32, 8, 8),))
    assert all(o.is_contiguous() for o in outs)
    assert LayerNorm2d(16)(torch.randn(2, 16, 5, 5)).is_contiguous()
    rois = torch.tensor([[0, 3., 5., 40., 30.], [1, 20., 2., 60., 61.]])
    import torchvision  # an independent RoIAlign that honours strides
    torch.testing.assert_close(roi_align(outs[0], rois, (7, 7), 1 / 4, 0, 'avg', True),
                               torchvision.ops.roi_align(outs[0], rois, 7, 1 / 4, 0, True), rtol=1e-4, atol=1e-5)
