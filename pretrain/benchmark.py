"""The ``pretrain`` suite of ``tools/benchmark.py``: what the recipes cost per training step, in pairs timed side
by side (``vitbench/engine/step_meter.py``). A pair's ratio is other / base:

* ``mae_b_vs_supervised_b``: MAE-B (ViT-B/16 encoder, 8 x 512 decoder with 16 heads, 75 % masked) vs supervised
  ViT-B, the MAE paper's efficiency claim at its scale. The encoder sees 25 % of the patches and the model FLOPs
  say 0.56x; target <= 0.60x the step time on a GPU in bf16.
* ``mae_vs_supervised``: MAE-lite Tiny (12-head ViT-Tiny, 1 x 96 decoder) vs supervised Tiny.
* ``dmae_vs_mae``: distilled MAE (Tiny student, frozen ViT-B teacher on the visible patches) vs MAE-lite Tiny.
* ``attn_vs_full_ft``: attention-only vs full fine-tuning of DeiT III-S ("Three things" §4; targets <= 0.90x the
  step time, <= 0.85x the peak memory). ``ffn_vs_full_ft``: FFN-only vs full, the alternative the paper rejects.
  Both are "Three things" Figure 4's right panels, whose text (§4) states what the ratios print beside the measured
  ones (``.../paper``): attention-only fine-tuning needs "10% less memory", is "10% faster" and trains
  "approximately one third of the weights" (``.../trainable_params``, the trainable parameters' ratio, counted).

A step is forward (under autocast for bf16) + backward + AdamW update (fused on CUDA, as ``tools/train.py`` runs
it there). Each row reports the step time (fastest and median round), images/s, the model's multiply-adds per
image (``gmacs``: the papers' count for a classifier, the traced loss forward for MAE and distilled MAE, the
teacher included), MFU (``vitbench/engine/mfu.py``: 6 x MACs per image, 2 x for the frozen teacher's forward) and
the peak memory of a step that creates its gradients and optimizer state (a fresh AdamW), plus the weights: on
CPU the process's resident-memory increase (median of three readings), on CUDA the allocator's. Ratios
``pretrain/<pair>/<dtype>/step``, ``.../peak_memory`` and ``.../flops`` (model FLOPs per step, computed, beside
the measured step ratio). With ``--profile`` each row also has ``profile``: the step's device time by kind
(matmul, attention, normalization, fused ...; ``vitbench/engine/kernel_profile.py``), which says where a step
costs more than its FLOPs.

Only the models of the pair being measured are alive, and each is built from its class (no registry search, so
no ``locations`` import the detection and segmentation glue): the suite needs neither mmseg nor mmdet.
"""
import statistics
import tempfile
from typing import Callable, Dict, List, Sequence, Tuple

import torch
from torch import nn

from vitbench.engine.kernel_profile import format_breakdown, kernel_breakdown
from vitbench.engine.mfu import mfu, train_flops
from vitbench.engine.step_meter import PeakRSS, autocast, peak_memory_mb, synchronize, time_side_by_side

TINY_ARCH = 'vit_tiny12h_patch16_224'    # MAE-lite's encoder
BASE_ARCH = 'deit_base_patch16_224'      # ViT-B/16: MAE-B's encoder, supervised ViT-B, the distilled-MAE teacher
FINETUNE_ARCH = 'deit3_small_patch16_224'
LITE_DECODER = dict(embed_dim=96, depth=1, num_heads=3)
BASE_DECODER = dict(embed_dim=512, depth=8, num_heads=16)  # MAE's ViT-B decoder

def _supervised(arch: str) -> Callable[[str], nn.Module]:
    def build(tmp):
        from .classifier import ImageClassifier
        return ImageClassifier(dict(arch=arch), loss=dict(kind='bce'))
    return build


def _mae(arch: str, decoder: dict) -> Callable[[str], nn.Module]:
    def build(tmp):
        from .mae import MAE
        return MAE(dict(arch=arch), decoder=decoder)
    return build


def _dmae(tmp: str) -> nn.Module:
    from backbones import create_model, save_checkpoint

    from .dmae import DistilledMAE
    teacher = save_checkpoint(f'{tmp}/teacher.pth', create_model(BASE_ARCH, num_classes=0))
    return DistilledMAE(dict(arch=TINY_ARCH), teacher=dict(checkpoint=teacher), decoder=LITE_DECODER)


def _finetune(trainable: str) -> Callable[[str], nn.Module]:
    def build(tmp):
        from .classifier import ImageClassifier
        return ImageClassifier(dict(arch=FINETUNE_ARCH), trainable=trainable)
    return build


# model name -> (the backbone variant in the rows, how to build it from a folder for the teacher's file)
MODELS: Dict[str, Tuple[str, Callable[[str], nn.Module]]] = {
    'supervised': (TINY_ARCH, _supervised(TINY_ARCH)),
    'mae': (TINY_ARCH, _mae(TINY_ARCH, LITE_DECODER)),
    'dmae': (TINY_ARCH, _dmae),
    'supervised_b': (BASE_ARCH, _supervised(BASE_ARCH)),
    'mae_b': (BASE_ARCH, _mae(BASE_ARCH, BASE_DECODER)),
    'full_ft': (FINETUNE_ARCH, _finetune('all')),
    'attn_ft': (FINETUNE_ARCH, _finetune('attention')),
    'ffn_ft': (FINETUNE_ARCH, _finetune('ffn')),
}


# pair -> (base, other): the ratio is other / base
PAIRS = {
    'mae_b_vs_supervised_b': ('supervised_b', 'mae_b'),
    'mae_vs_supervised': ('supervised', 'mae'),
    'dmae_vs_mae': ('mae', 'dmae'),
    'attn_vs_full_ft': ('full_ft', 'attn_ft'),
    'ffn_vs_full_ft': ('full_ft', 'ffn_ft'),
}
# what a paper states of a pair's ratios (other / base), printed beside the measured ones: "Three things" §4 on
# Figure 4 (attention-only fine-tuning: 10 % less memory, 10 % faster, about a third of the weights trained)
PAPER_RATIOS = {'attn_vs_full_ft': dict(step=0.90, peak_memory=0.90, trainable_params=1 / 3)}


def parse_pairs(names: Sequence[str]) -> List[str]:
    unknown = [n for n in names if n not in PAIRS]
    if unknown:
        raise ValueError(f'--pairs: unknown {unknown}; expected some of {", ".join(PAIRS)}')
    return list(names)


# ---------------------------------------------------------------------------------------------- counting
class _LossForward(nn.Module):
    """A model's summed training loss as a module of the images alone (what the FLOP counter traces)."""

    def __init__(self, model: nn.Module, samples: dict, loss: Callable = None):
        super().__init__()
        self.model, self.samples = model, samples
        self.loss = loss or (lambda x: model(x, samples, mode='loss'))

    def forward(self, x):
        return sum(self.loss(x).values())


def step_macs(model: nn.Module, x: torch.Tensor, samples: dict) -> Tuple[float, float]:
    """(multiply-adds per image of the step's forward, the part of them run by a frozen teacher), on one image.

    A classifier counts as the papers count it (``backbones.complexity.count_flops``: every token through every
    block); MAE and distilled MAE as their loss forward runs (encoder on the visible tokens, decoder on all)."""
    from backbones.complexity import count_flops, flop_analyzer

    from .classifier import ImageClassifier
    from .dmae import DistilledMAE
    from .mae import MAE
    if isinstance(model, ImageClassifier):
        return float(count_flops(model.backbone, tuple(x.shape[-2:]))), 0.
    one = {k: v[:1] for k, v in samples.items()}

    def count(loss=None):
        return float(flop_analyzer(_LossForward(model, one, loss), (x[:1],)).total())

    with torch.no_grad():
        total = count()
        frozen = total - count(lambda imgs: MAE.loss(model, imgs)) if isinstance(model, DistilledMAE) else 0.
    return total, frozen


# ---------------------------------------------------------------------------------------------- measuring
def _train_step(model, x, samples, device, dtype) -> Callable[[], None]:
    # fused on CUDA, as tools/train.py runs it there: one kernel per parameter group instead of a dozen passes
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-6,
                                  fused=torch.device(device).type == 'cuda')

    def step():
        with autocast(device, dtype):
            loss = sum(model(x, samples, mode='loss').values())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def _weights_mb(model) -> float:
    return sum(p.numel() * p.element_size() for p in model.parameters()) / 2 ** 20


def _peak_memory_mb(model, x, samples, device, dtype, peak_rss, repeats: int) -> float:
    """Weights + the peak of one step that creates its gradients and optimizer state (a fresh AdamW); on CPU the
    median of ``repeats`` resident-memory readings (the C allocator makes single readings noisy)."""
    readings = []
    for _ in range(repeats):
        model.zero_grad(set_to_none=True)
        step = _train_step(model, x, samples, device, dtype)
        readings.append(peak_memory_mb(step, device, peak_rss))
        del step
    synchronize(device)
    return None if None in readings else _weights_mb(model) + statistics.median(readings)


def _build(name: str, device, compile_backend=None) -> Tuple[nn.Module, nn.Module]:
    """(the model, what the step calls: the model or its ``torch.compile``)."""
    with tempfile.TemporaryDirectory() as tmp:
        model = MODELS[name][1](tmp).to(device).train()
    return model, (torch.compile(model, backend=compile_backend) if compile_backend else model)


def bench_pretrain(args, peaks: Dict[str, float], datasheet: float = None) -> Tuple[List[dict], Dict[str, float]]:
    """Rows and ratios of the pairs ``args.pairs`` in ``args.dtypes``; ``peaks``: the measured GEMM FLOP/s per
    dtype, ``datasheet``: the device's datasheet bf16 FLOP/s (MFU columns)."""
    device = torch.device(args.device)
    batch = args.batch_size
    torch.manual_seed(0)
    x = torch.randn(batch, 3, 224, 224, device=device)
    samples = dict(gt_label=torch.randint(0, 1000, (batch,), device=device))
    peak_rss = PeakRSS()
    repeats = 1 if device.type == 'cuda' else 3
    rows, ratios = [], {}
    for pair in args.pairs:
        base, other = PAIRS[pair]
        models = {k: _build(k, device, args.compile) for k in (base, other)}
        macs = {k: step_macs(m, x, samples) for k, (m, _) in models.items()}
        for dtype in args.dtypes:
            steps = {k: _train_step(c, x, samples, device, dtype) for k, (_, c) in models.items()}
            secs = time_side_by_side(steps, args.rounds, args.iters, device, args.clock, args.warmup)
            breakdown = {k: kernel_breakdown(step, device) for k, step in steps.items()} \
                if getattr(args, 'profile', False) else {}
            del steps
            key = f'pretrain/{pair}/{dtype}'
            ratios[f'{key}/step'] = secs[other][0] / secs[base][0]
            flops = {k: train_flops(macs[k][0], batch, frozen_macs=macs[k][1]) for k in models}
            ratios[f'{key}/flops'] = flops[other] / flops[base]
            mem = {}
            for k, (model, compiled) in models.items():
                mem[k] = _peak_memory_mb(compiled, x, samples, device, dtype, peak_rss, repeats)
                fastest = secs[k][0]
                rows.append(dict(
                    model=MODELS[k][0], impl=k, pair=pair, mode='train step', dtype=dtype, batch=batch,
                    device=str(device), compiled=bool(args.compile),
                    trainable_params_M=sum(p.numel() for p in model.parameters() if p.requires_grad) / 1e6,
                    gmacs=macs[k][0] / 1e9, frozen_gmacs=macs[k][1] / 1e9,
                    ms_per_iter=1e3 * fastest, ms_per_iter_median=1e3 * secs[k][1], img_per_s=batch / fastest,
                    model_tflops=flops[k] / fastest / 1e12,
                    mfu=mfu(macs[k][0], batch, fastest, peaks.get(dtype), frozen_macs=macs[k][1]),
                    mfu_datasheet=mfu(macs[k][0], batch, fastest, datasheet if dtype != 'fp32' else None,
                                      frozen_macs=macs[k][1]),
                    peak_mem_mb=mem[k], profile=breakdown.get(k)))
                if k in breakdown:
                    print(f'  {k} {dtype}, device time per step: {format_breakdown(breakdown[k])}', flush=True)
            if mem[base] and mem[other]:
                ratios[f'{key}/peak_memory'] = mem[other] / mem[base]
            trainable = {k: sum(p.numel() for p in m.parameters() if p.requires_grad) for k, (m, _) in models.items()}
            ratios[f'{key}/trainable_params'] = trainable[other] / trainable[base]
            for what, value in PAPER_RATIOS.get(pair, {}).items():
                if f'{key}/{what}' in ratios:
                    ratios[f'{key}/{what}/paper'] = value
            print(f'  {pair} {dtype}: {other} {1e3 * secs[other][0]:.1f} ms vs {base} {1e3 * secs[base][0]:.1f} ms '
                  f'per step (ratio {ratios[f"{key}/step"]:.3f}; FLOPs {ratios[f"{key}/flops"]:.3f})', flush=True)
        del models
        if device.type == 'cuda':
            torch.cuda.empty_cache()
    return rows, ratios
