"""vitbench/engine/kernel_profile.py: a step's device time by kind of kernel / operator."""
import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from vitbench.engine.kernel_profile import format_breakdown, kernel_breakdown, kind_of

# kernel names as torch 2.11 + CUDA 13 ran them on an NVIDIA H100 (docs/benchmarks.md's MAE-B profile), and CPU
# operators
SEEN = {
    'nvjet_sm90_tst_192x192_64x4_1x2_h_bz_coopB_bias_TNN': 'matmul',
    'nvjet_sm90_tst_192x192_64x3_2x1_v_bz_coopB_splitK_NTN': 'matmul',
    'cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0': 'attention',
    'void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8': 'attention',
    'fmha_cutlassB_bf16_aligned_64x64_k64_sm80(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch': 'attention',
    'void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 256u': 'normalization',
    'void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float, false>(float': 'normalization',
    'triton_per_fused__to_copy_add_native_layer_norm_backward_view_26': 'normalization',
    'triton_poi_fused_gelu_gelu_backward_view_23': 'fused',
    'void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda(at::TensorIteratorBase': 'copy',
    'void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFl': 'other',
    'void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::Fused': 'optimizer',
    'aten::addmm': 'matmul', 'aten::mm': 'matmul', 'aten::bmm': 'matmul',
    'aten::_scaled_dot_product_flash_attention_for_cpu_backward': 'attention',
    'aten::native_layer_norm': 'normalization', 'aten::gelu_backward': 'activation',
    'aten::convolution_backward': 'convolution', 'aten::copy_': 'copy', 'aten::add_': 'other',
}


@pytest.mark.parametrize('name, kind', sorted(SEEN.items()))
def test_kinds_of_real_kernel_and_operator_names(name, kind):
    assert kind_of(name) == kind


class Block(nn.Module):
    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.heads, self.norm, self.qkv = heads, nn.LayerNorm(dim), nn.Linear(dim, 3 * dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(self.norm(x)).view(B, N, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        x = x + F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(B, N, C)
        return x + self.fc2(F.gelu(self.fc1(x)))


def test_a_cpu_training_step_breaks_down_into_its_parts():
    """A transformer block's training step on CPU: every part is found under its kind, the optimizer's plain
    operators included, and the kinds add up to no more than the wall time of the profiled steps."""
    torch.manual_seed(0)
    model = Block()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(8, 32, 64)

    def step():
        model(x).square().mean().backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    step()
    start = time.perf_counter()
    breakdown = kernel_breakdown(step, 'cpu', steps=3)
    wall_ms = (time.perf_counter() - start) * 1e3 / 3
    kinds = breakdown['ms_per_step']
    assert {'matmul', 'attention', 'normalization', 'activation', 'optimizer'} <= set(kinds)
    assert 0 < breakdown['total_ms'] == pytest.approx(sum(kinds.values()), abs=0.01)
    assert breakdown['total_ms'] <= wall_ms
    ms, kind, calls, name = breakdown['top'][0]
    assert ms == max(kinds.values()) or ms <= kinds[kind]
    assert all(calls >= 1 for _, _, calls, _ in breakdown['top'])
    # AdamW on CPU: sqrt / lerp_ / ... operators under optimizer.step, none of them counted as 'other'
    assert not [n for _, k, _, n in breakdown['top'] if k == 'other' and n in ('aten::sqrt', 'aten::lerp_')]
    line = format_breakdown(breakdown)
    assert line.startswith(next(iter(kinds))) and ' %' in line
