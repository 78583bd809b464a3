"""vitbench/engine/mfu.py: model FLOPs utilisation, by hand and on the issue's own H200 numbers."""
import pytest
import torch

from vitbench.engine.mfu import datasheet_bf16_flops, gemm_rate, mfu, train_flops


def test_mfu_by_hand():
    # 1 GMAC per image, 10 images in 0.5 s, peak 200 GFLOP/s: training 6 x 1e9 x 10 / 0.5 = 120 GFLOP/s = 60 %
    assert mfu(1e9, 10, 0.5, 2e11) == pytest.approx(0.6)
    # forward only: 2 x 1e9 x 10 / 0.5 = 40 GFLOP/s = 20 %
    assert mfu(1e9, 10, 0.5, 2e11, train=False) == pytest.approx(0.2)
    # 0.4 GMAC of it a frozen teacher's forward: (6 x 0.6e9 + 2 x 0.4e9) x 10 / 0.5 = 88 GFLOP/s = 44 %
    assert train_flops(1e9, 10, frozen_macs=4e8) == pytest.approx(4.4e10)
    assert mfu(1e9, 10, 0.5, 2e11, frozen_macs=4e8) == pytest.approx(0.44)
    assert mfu(1e9, 10, 0.5, None) is None  # no peak (a CPU's datasheet), no MFU


def test_mfu_of_the_issue_s_vit_b_row():
    """Issue 30: ViT-B (17.58 GMACs) fwd+bwd at 2,855 images/s is 30 % of the H200's 989 TFLOP/s."""
    batch = 256
    seconds = batch / 2855
    assert mfu(17.58e9, batch, seconds, datasheet_bf16_flops('NVIDIA H200')) == pytest.approx(0.3045, abs=5e-4)


@pytest.mark.parametrize('name, tflops', [
    ('NVIDIA H200', 989), ('NVIDIA H100 80GB HBM3', 989), ('NVIDIA H100 SXM5 80GB', 989), ('NVIDIA GH200 480GB', 989),
    ('NVIDIA H100 PCIe', 756), ('NVIDIA A100-SXM4-80GB', 312), ('NVIDIA A100-PCIE-40GB', 312),
    ('NVIDIA H100 NVL', None), ('NVIDIA H200 NVL', None), ('Tesla V100-SXM2-32GB', None), ('AMD EPYC', None)])
def test_datasheet_peaks(name, tflops):
    peak = datasheet_bf16_flops(name)
    assert (peak and peak / 1e12) == tflops


def test_measured_gemm_rate_is_a_rate():
    """A 128³ product is 2 x 128³ FLOPs; the rate is that over a positive time, and bf16 runs where fp32 does."""
    for dtype in (torch.float32, torch.bfloat16):
        rate = gemm_rate('cpu', dtype, size=128, iters=2, warmup=1)
        assert 1e6 < rate < 1e14
