"""``tools/train.py --amp`` without a GPU: bfloat16 autocast through vitbench.CPUAmpOptimWrapper."""
import pytest
import torch
from torch import nn

from _tool_helpers import REPO, run_tool, train
from vitbench.engine.cpu_amp import CPUAmpOptimWrapper, cpu_has_fast_bf16


def test_wrapper_autocasts_the_forward_and_steps_fp32_weights():
    model = nn.Linear(8, 4)
    before = model.weight.detach().clone()
    wrapper = CPUAmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    with wrapper.optim_context(model):
        out = model(torch.randn(16, 8))
    assert out.dtype == torch.bfloat16
    wrapper.update_params(out.float().square().mean())
    assert model.weight.dtype == torch.float32 and not torch.equal(model.weight, before)
    assert not torch.is_autocast_enabled('cpu')  # only inside the context


def test_wrapper_rejects_an_unknown_dtype():
    with pytest.raises(ValueError, match="dtype must be 'bfloat16' or 'float16'"):
        CPUAmpOptimWrapper(optimizer=torch.optim.SGD(nn.Linear(2, 2).parameters(), lr=0.1), dtype='int8')


@pytest.mark.skipif(torch.cuda.is_available(), reason='the GPU path: tests/test_engine_amp.py')
@pytest.mark.skipif(not cpu_has_fast_bf16(), reason='--amp is refused on a CPU without bf16 units '
                    '(tests/test_faults_inputs.py checks that)')
def test_train_tool_amp_runs_on_cpu(tmp_path):
    train(tmp_path, '--amp')  # mmengine's AmpOptimWrapper would refuse: no GPU
    assert (tmp_path / 'iter_4.pth').is_file()


@pytest.mark.skipif(torch.cuda.is_available(), reason='on a GPU mmcv has float16 kernels')
def test_train_tool_amp_refuses_detection_on_cpu():
    result = run_tool('tools/train.py', 'configs/demo/maskrcnn_demo.py', '--amp')
    assert result.returncode == 2 and '--amp without a GPU is not available for detection' in result.stderr
    assert 'Traceback' not in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason='on a GPU --amp auto is mixed precision everywhere')
def test_amp_auto_keeps_float32_where_mixed_precision_cannot_run_and_says_why():
    import importlib.util
    from mmengine.config import Config
    spec = importlib.util.spec_from_file_location('train_tool', REPO / 'tools' / 'train.py')
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    det = Config(dict(optim_wrapper=dict(type='OptimWrapper'), experiment=dict(task='det')))
    tool.use_mixed_precision(det, 'configs/demo/maskrcnn_demo.py', 'det', 'cpu', auto=True)  # --amp alone refuses (above)
    assert det.optim_wrapper.type == 'OptimWrapper'
    seg = Config(dict(optim_wrapper=dict(type='OptimWrapper'), experiment=dict(task='seg')))
    tool.use_mixed_precision(seg, 'configs/demo/upernet_demo.py', 'seg', 'cpu', auto=True)
    assert seg.optim_wrapper.type == ('vitbench.CPUAmpOptimWrapper' if cpu_has_fast_bf16() else 'OptimWrapper')
