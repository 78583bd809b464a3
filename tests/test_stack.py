"""The OpenMMLab stack is installed and works: the toolboxes import, mmcv's compiled ops run, env_check agrees."""
import subprocess
import sys
from pathlib import Path

import pytest
import torch


def test_downstream_toolboxes_import():
    import mmdet.models  # noqa: F401
    import mmseg.models  # noqa: F401
    import timm
    assert timm.create_model('vit_tiny_patch16_224', pretrained=False, num_classes=3, img_size=32,
                             patch_size=16)(torch.zeros(1, 3, 32, 32)).shape == (1, 3)


def test_mmcv_ops_nms_and_roi_align_run():
    from mmcv.ops import RoIAlign, nms
    boxes = torch.tensor([[0., 0., 10., 10.], [1., 1., 10., 10.], [20., 20., 30., 30.]])
    dets, keep = nms(boxes, torch.tensor([0.9, 0.8, 0.7]), iou_threshold=0.5)
    assert keep.tolist() == [0, 2]
    assert dets[:, 4].tolist() == pytest.approx([0.9, 0.7])
    # A 4x4 ramp pooled over the whole map into 2x2 bins: each bin averages its quadrant.
    feats = torch.arange(16.).view(1, 1, 4, 4)
    pooled = RoIAlign((2, 2), spatial_scale=1.0, sampling_ratio=2, aligned=True)(
        feats, torch.tensor([[0., 0., 0., 4., 4.]]))
    assert pooled.flatten().tolist() == pytest.approx([2.5, 4.5, 10.5, 12.5])


def test_env_check_reports_a_working_stack():
    result = subprocess.run([sys.executable, 'tools/env_check.py'], cwd=Path(__file__).resolve().parents[1],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'nms and RoIAlign run' in result.stdout and 'mmcv         2.1.0' in result.stdout
    from mmcv.ops import get_compiling_cuda_version  # a CPU-only build says 'not available'
    compiled = get_compiling_cuda_version()
    kernels = 'none: CPU-only ops' if compiled == 'not available' else f'ops compiled for CUDA {compiled}'
    assert f'mmcv CUDA    {kernels}' in result.stdout


def _env_check_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location('env_check', Path(__file__).resolve().parents[1] / 'tools/env_check.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_env_check_from_a_checkout_on_another_torch(monkeypatch, capsys):
    """A GPU image set up by tools/install_offline.sh: vitbench from the checkout (not installed), the image's own
    torch. The ranges come from pyproject.toml, the tested versions from requirements.lock: a version inside the
    ranges other than the locked one is said and breaks nothing (torch, timm), one outside them (mmdet) does."""
    import importlib.metadata
    env_check = _env_check_module()
    real_version = importlib.metadata.version
    versions = {'torch': '2.11.0+cu130'}

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, 'requires', not_installed)
    monkeypatch.setattr(importlib.metadata, 'version', lambda dist: versions.get(dist) or real_version(dist))
    assert env_check.main() == 0
    out = capsys.readouterr().out
    assert 'vitbench     from the checkout' in out and 'torch        2.11.0+cu130  (expected 2.14.1)' in out
    assert '- torch 2.11.0+cu130 installed, 2.14.1 in requirements.lock' in out
    versions['timm'] = '1.0.99'
    assert env_check.main() == 0
    assert '- timm 1.0.99 installed, 1.0.31 in requirements.lock' in capsys.readouterr().out
    versions['mmdet'] = '3.2.0'
    assert env_check.main() == 1
    assert '- mmdet 3.2.0 installed, vitbench needs mmdet<4,>=3.3.0 (pyproject.toml)' in capsys.readouterr().err
