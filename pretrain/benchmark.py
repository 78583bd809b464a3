"""The ``pretrain`` suite of ``tools/benchmark.py``: what the recipes cost per training step.

* MAE (mask 0.75, MAE-lite decoder) vs supervised training of the same encoder (target: <= 0.40x the step
  time: the encoder sees 25% of the tokens);
* distilled MAE vs MAE: the overhead of the frozen teacher's forward pass on the visible tokens;
* attention-only vs full fine-tuning ("Three things" §4: about -10% memory and -10% time; targets <= 0.85x
  peak memory, <= 0.90x step time).

A step is forward + backward + AdamW update. Times come from ``tools/benchmark.py``'s side-by-side timing
(alternating rounds, fastest round). Peak memory is that of a training step from a model whose gradients and
optimizer state do not exist yet (so both are counted, as a GPU's ``max_memory_allocated`` counts them),
plus the weights: on CPU the process's peak resident-memory increase, on GPU CUDA's allocator peak.
"""
import statistics
from typing import Callable, Dict, List, Tuple

import torch

SUPERVISED_ARCH = 'vit_tiny12h_patch16_224'  # MAE-lite's encoder
TEACHER_ARCH = 'deit_base_patch16_224'       # MAE-Base, the distilled-MAE teacher
FINETUNE_ARCH = 'deit3_small_patch16_224'


def _device() -> torch.device:
    return torch.device('cuda' if torch.cuda.is_available() else 'cpu')


def _models(tmp_dir: str, device) -> Dict[str, torch.nn.Module]:
    from mmengine.registry import init_default_scope

    from backbones import create_model, save_checkpoint
    from pretrain import MAE, DistilledMAE, ImageClassifier
    init_default_scope('vitbench')
    lite = dict(embed_dim=96, depth=1, num_heads=3)
    teacher = save_checkpoint(f'{tmp_dir}/teacher.pth', create_model(TEACHER_ARCH, num_classes=0))
    models = dict(
        supervised=ImageClassifier(dict(arch=SUPERVISED_ARCH), loss=dict(kind='bce')),
        mae=MAE(dict(arch=SUPERVISED_ARCH), decoder=lite),
        dmae=DistilledMAE(dict(arch=SUPERVISED_ARCH), teacher=dict(checkpoint=teacher), decoder=lite),
        full_ft=ImageClassifier(dict(arch=FINETUNE_ARCH), trainable='all'),
        attn_ft=ImageClassifier(dict(arch=FINETUNE_ARCH), trainable='attention'),
    )
    return {k: m.to(device).train() for k, m in models.items()}


def _train_step(model, x, samples) -> Callable[[], None]:
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-6)

    def step():
        loss = sum(model(x, samples, mode='loss').values())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return step


def _peak_memory_mb(model, x, samples, peak_rss, repeats: int = 3) -> float:
    """Weights + peak of one step that creates its gradients and optimizer state (fresh AdamW); on CPU the
    median of ``repeats`` resident-memory readings (the C allocator makes single readings noisy)."""
    weights = sum(p.numel() * p.element_size() for p in model.parameters()) / 2 ** 20

    def fresh_step():
        model.zero_grad(set_to_none=True)
        return _train_step(model, x, samples)

    if x.is_cuda:
        step = fresh_step()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        step()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() / 2 ** 20
    readings = [peak_rss(fresh_step()) for _ in range(repeats)]
    return None if None in readings else weights + statistics.median(readings)


def bench_pretrain(args, time_side_by_side, peak_rss) -> Tuple[List[dict], Dict[str, float]]:
    """``time_side_by_side`` and ``peak_rss`` are tools/benchmark.py's measuring helpers."""
    import tempfile
    device = _device()
    torch.manual_seed(0)
    batch = args.batch_size
    x = torch.randn(batch, 3, 224, 224, device=device)
    samples = dict(gt_label=torch.randint(0, 1000, (batch,), device=device))
    with tempfile.TemporaryDirectory() as tmp:
        models = _models(tmp, device)
    rows, ratios = [], {}
    pairs = dict(mae_vs_supervised=('supervised', 'mae'), dmae_vs_mae=('mae', 'dmae'),
                 attn_vs_full_ft=('full_ft', 'attn_ft'))
    for name, (base, other) in pairs.items():
        secs = time_side_by_side({k: _train_step(models[k], x, samples) for k in (base, other)},
                                 args.rounds, args.iters)
        ratios[f'pretrain/{name}_step'] = secs[other][0] / secs[base][0]
        for k in (base, other):
            model = models[k]
            row = dict(model=FINETUNE_ARCH if k.endswith('_ft') else SUPERVISED_ARCH, impl=k, pair=name,
                       mode='train step', dtype='fp32', batch=batch, device=str(device),
                       trainable_params_M=sum(p.numel() for p in model.parameters() if p.requires_grad) / 1e6,
                       ms_per_iter=1e3 * secs[k][0], ms_per_iter_median=1e3 * secs[k][1],
                       img_per_s=batch / secs[k][0])
            if name == 'attn_vs_full_ft':
                row['peak_mem_mb'] = _peak_memory_mb(model, x, samples, peak_rss)
            rows.append(row)
        print(f'  {other} vs {base}: {1e3 * secs[other][0]:.0f} ms vs {1e3 * secs[base][0]:.0f} ms per step '
              f'(ratio {ratios[f"pretrain/{name}_step"]:.3f})', flush=True)
    full, attn = rows[-2]['peak_mem_mb'], rows[-1]['peak_mem_mb']
    if full and attn:
        ratios['pretrain/attn_vs_full_ft_peak_memory'] = attn / full
    return rows, ratios
