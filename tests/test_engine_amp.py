"""Mixed precision that matches the hardware (vitbench.engine.amp) and fused AdamW (vitbench.engine.compile): the
choices are pure functions of the device, its bf16 support and the task, so the GPU branches are tested here on
CPU, through tools/train.py's own ``use_mixed_precision`` too."""
import importlib.util
from types import SimpleNamespace

import pytest
import torch
from mmengine.config import Config
from mmengine.optim import AmpOptimWrapper, OptimWrapper
from torch import nn

from _tool_helpers import REPO
from vitbench.engine.amp import DET_CPU, DET_FP16, AutocastOptimWrapper, amp_plan, cuda_has_bf16
from vitbench.engine.compile import BACKBONE, DET_BACKBONE_ONLY, TRAIN_STEP, compile_plan, use_fused_adamw
from vitbench.engine.cpu_amp import SLOW_BF16
from vitbench.engine.run_cost import precision_of
from vitbench.registry import OPTIM_WRAPPERS

BF16_GPU = dict(type='vitbench.AutocastOptimWrapper', dtype='bfloat16', device_type='cuda')
FP16_GPU = dict(type='AmpOptimWrapper', dtype='float16', loss_scale='dynamic')


@pytest.mark.parametrize('task', ['pretrain', 'finetune', 'transfer', 'seg', None])
def test_a_bf16_gpu_trains_in_bf16_without_loss_scaling(task):
    assert amp_plan('cuda', task, gpu_bf16=True) == ('bf16', BF16_GPU, None)


@pytest.mark.parametrize('task', ['pretrain', 'seg', None])
def test_a_gpu_without_bf16_trains_in_fp16_with_dynamic_loss_scaling(task):
    plan = amp_plan('cuda', task, gpu_bf16=False)
    assert plan.precision == 'fp16' and plan.wrapper == FP16_GPU and 'compute capability < 8.0' in plan.why


@pytest.mark.parametrize('gpu_bf16', [True, False])
def test_detection_trains_in_fp16_on_every_gpu(gpu_bf16):
    # mmcv 2.1.0's CUDA RoIAlign dispatches float32 / float16 only, and mmdet casts the RoIs to the features' dtype
    assert amp_plan('cuda', 'det', gpu_bf16=gpu_bf16) == ('fp16', FP16_GPU, DET_FP16)


def test_cpu_choices_are_unchanged():
    assert amp_plan('cpu', 'seg', cpu_fast_bf16=True) == ('bf16', dict(type='vitbench.CPUAmpOptimWrapper',
                                                                       dtype='bfloat16'), None)
    assert amp_plan('cpu', 'seg', cpu_fast_bf16=False) == ('fp32', None, SLOW_BF16)
    assert amp_plan('cpu', 'det', cpu_fast_bf16=True) == ('fp32', None, DET_CPU)


@pytest.mark.parametrize('capability, native', [((7, 0), False), ((7, 5), False), ((8, 0), True), ((9, 0), True)])
def test_cuda_has_bf16_reads_the_capability_of_this_ranks_gpu(monkeypatch, capability, native):
    asked = []
    monkeypatch.setattr(torch.cuda, 'is_available', lambda: True)
    monkeypatch.setattr(torch.cuda, 'device_count', lambda: 8)
    monkeypatch.setattr(torch.cuda, 'get_device_capability', lambda index: asked.append(index) or capability)
    monkeypatch.setattr(torch.version, 'hip', None)
    monkeypatch.setenv('LOCAL_RANK', '3')
    assert cuda_has_bf16() is native and asked == [3]  # V100 (7.0) / T4 (7.5) emulate bf16: float16 there


def _tool():
    spec = importlib.util.spec_from_file_location('train_tool', REPO / 'tools' / 'train.py')
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def _config(task, **wrapper):
    return Config(dict(optim_wrapper=dict(type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-3),
                                          clip_grad=dict(max_norm=1.0), **wrapper),
                       experiment=dict(task=task)))


def test_train_tool_on_a_bf16_gpu_keeps_the_config_wrapper_keys_and_drops_loss_scaling(monkeypatch, capsys):
    tool = _tool()
    monkeypatch.setattr(tool, 'cuda_has_bf16', lambda: True)
    cfg = _config('seg', loss_scale=512.0)
    tool.use_mixed_precision(cfg, 'configs/upernet_demo.py', 'seg', 'cuda', auto=False)
    assert cfg.optim_wrapper.to_dict() == dict(type='vitbench.AutocastOptimWrapper', dtype='bfloat16',
                                               device_type='cuda', optimizer=dict(type='AdamW', lr=1e-3),
                                               clip_grad=dict(max_norm=1.0))
    assert capsys.readouterr().out == ''


def test_train_tool_on_a_gpu_detection_or_an_old_gpu_gets_fp16_and_says_why(monkeypatch, capsys):
    tool = _tool()
    monkeypatch.setattr(tool, 'cuda_has_bf16', lambda: True)
    det = _config('det')
    tool.use_mixed_precision(det, 'configs/demo/maskrcnn_demo.py', 'det', 'cuda', auto=True)  # auto: the same
    assert det.optim_wrapper.type == 'AmpOptimWrapper' and det.optim_wrapper.dtype == 'float16'
    assert det.optim_wrapper.loss_scale == 'dynamic' and det.optim_wrapper.clip_grad == dict(max_norm=1.0)
    assert "--amp: float16 (detection trains in float16" in capsys.readouterr().out
    monkeypatch.setattr(tool, 'cuda_has_bf16', lambda: False)
    old = _config('pretrain', loss_scale=512.0)  # the config's own loss scale is kept
    tool.use_mixed_precision(old, 'configs/demo/sup_demo.py', 'pretrain', 'cuda', auto=False)
    assert old.optim_wrapper.type == 'AmpOptimWrapper' and old.optim_wrapper.loss_scale == 512.0


def test_the_bf16_gpu_wrapper_builds_and_has_no_loss_scaler():
    model = nn.Linear(8, 4)
    wrapper = OPTIM_WRAPPERS.build(dict(BF16_GPU, optimizer=torch.optim.SGD(model.parameters(), lr=0.1)))
    assert isinstance(wrapper, AutocastOptimWrapper) and wrapper.cast_dtype == torch.bfloat16
    assert not hasattr(wrapper, 'loss_scaler') and wrapper.device_type == 'cuda'


def test_autocast_wrapper_backward_is_unscaled_and_steps_fp32_weights():
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    x = torch.randn(16, 8)
    wrapper = AutocastOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.0), device_type='cpu')
    with wrapper.optim_context(model):
        out = model(x)
    assert out.dtype == torch.bfloat16
    wrapper.backward(out.float().square().mean())  # what update_params calls before the step
    expected = torch.autograd.grad(model(x).square().mean(), model.weight)[0]
    torch.testing.assert_close(model.weight.grad, expected, rtol=0.05, atol=1e-2)  # bf16 rounding, no 2**16 scale
    assert model.weight.grad.dtype == model.weight.dtype == torch.float32


def test_autocast_wrapper_refuses_fp16_on_a_gpu_and_resumes_an_fp16_checkpoint():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match='float16 on a GPU needs loss scaling'):
        AutocastOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dtype='float16',
                             device_type='cuda')
    wrapper = AutocastOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1), device_type='cpu')
    state = wrapper.state_dict()
    wrapper.load_state_dict(dict(state, loss_scaler=dict(scale=65536.0)))  # what AmpOptimWrapper saved


def test_precision_of_names_what_autocast_computes_in():
    def precision(wrapper):
        return precision_of(SimpleNamespace(optim_wrapper=wrapper))

    model = nn.Linear(2, 2)
    assert precision(OptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1))) == 'fp32'
    assert precision(AutocastOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1))) == 'bf16'
    amp = object.__new__(AmpOptimWrapper)  # mmengine's refuses to build without a GPU
    for dtype, name in ((None, 'fp16'), (torch.float16, 'fp16'), (torch.bfloat16, 'bf16')):
        amp.cast_dtype = dtype
        assert precision(amp) == name
    assert precision(dict(type='OptimWrapper')) is None  # not built: the run did not train


@pytest.mark.parametrize('optimizer, device, fused', [
    (dict(type='AdamW', lr=1e-3), 'cuda', True),
    (dict(type='torch.optim.AdamW', lr=1e-3), 'cuda', True),
    (dict(type=torch.optim.AdamW, lr=1e-3), 'cuda', True),
    (dict(type='AdamW', lr=1e-3), 'cpu', False),
    (dict(type='AdamW', lr=1e-3, fused=False), 'cuda', False),  # the config chose
    (dict(type='AdamW', lr=1e-3, foreach=True), 'cuda', False),  # fused and foreach exclude each other
    (dict(type='AdamW', lr=1e-3, differentiable=True), 'cuda', False),
    (dict(type='Lamb', lr=1e-3), 'cuda', False),
    (dict(type='SGD', lr=1e-3), 'cuda', False),
    (None, 'cuda', False),
])
def test_fused_adamw_on_cuda_only_where_the_config_left_it_open(optimizer, device, fused):
    assert use_fused_adamw(optimizer, device) is fused


def test_compile_plan_compiles_the_train_step_except_detections_backbone():
    for task in ('pretrain', 'finetune', 'transfer', 'seg', None):
        assert compile_plan(task) == (TRAIN_STEP, None)
    assert compile_plan('det') == (BACKBONE, DET_BACKBONE_ONLY)
