"""The ``dense`` suite of ``tools/benchmark.py``: what a training step of the dense tasks costs, as the tasks'
own configs build it (mmseg's / mmdet's models, data preprocessors and losses, mmengine's optim wrappers).

* UperNet on a ViT (``configs/upernet_deit3_b.py``'s model: vitbench's ViT, Feature2Pyramid, UPerHead, FCN
  auxiliary head) vs the same model with mmseg's own ``VisionTransformer`` of the same architecture in place of
  ours (the reference implementation a user of mmseg would otherwise take), side by side: step time and peak
  memory.
* Mask R-CNN on a ViT (``configs/maskrcnn_deit3_b.py``'s model: ViTDet's simple pyramid, RPN, RoI heads), alone:
  its step time and peak memory, and that it trains at all with mixed precision (mmcv's RoIAlign / nms on the
  device).

A step is ``model.train_step`` with the optim wrapper ``tools/train.py --amp`` would choose (bf16 autocast where the
device has fast bf16, float16 with loss scaling for detection on GPUs, float32 elsewhere), AdamW. The inputs are
random images of the configs' crop size (``--dense-size`` replaces it, e.g. on a CPU) with random ground truth.
"""
import copy
from typing import Dict, List, Tuple

import torch

SEG_CONFIG = 'configs/upernet_deit3_b.py'  # from any folder: the checkout's, or an installed package's (console)
DET_CONFIG = 'configs/maskrcnn_deit3_b.py'


def _model(config: str, arch: str):
    """The config's model with ``arch`` as its backbone (necks and heads follow, as ``--backbone`` does), no
    pre-trained weights."""
    from mmengine.config import Config

    from downstream.backbone_swap import swap_backbone
    from vitbench.console import config_path
    cfg = Config.fromfile(config_path(config))
    swap_backbone(cfg, arch, None, None)
    cfg.model.backbone.pop('init_cfg', None)
    return cfg.model


def _build(registry, model_cfg, device):
    """Built for one process as the Runner builds it there: SyncBN reverted to BN (mmengine's own function)."""
    from mmengine.model import revert_sync_batchnorm
    return revert_sync_batchnorm(registry.build(model_cfg)).to(device).train()


def _mmseg_vit(backbone: dict, size: int) -> dict:
    """mmseg's VisionTransformer with the architecture of vitbench's ``backbone`` config (DeiT-style: class token,
    qkv bias, pre-norm, raw block outputs at the same indices)."""
    from backbones.factory import family_record, variant_kwargs
    if family_record(backbone['arch']).name != 'vit':  # the record: mmseg has no counterpart of another family
        raise ValueError(f"--dense-arch {backbone['arch']}: the UperNet step is compared with mmseg's "
                         'VisionTransformer, so it takes a ViT variant (tools/list_backbones.py lists them)')
    spec = variant_kwargs(backbone['arch'])
    return dict(type='mmseg.VisionTransformer', img_size=(size, size), patch_size=spec['patch_size'],
                embed_dims=spec['embed_dim'], num_layers=spec['depth'], num_heads=spec['num_heads'],
                mlp_ratio=spec.get('mlp_ratio', 4), out_indices=list(backbone['out_indices']), qkv_bias=True,
                drop_path_rate=backbone.get('drop_path_rate', 0.0), with_cls_token=True, final_norm=False,
                interpolate_mode='bicubic')


def _seg_batch(batch: int, size: int, classes: int) -> dict:
    from mmengine.structures import PixelData
    from mmseg.structures import SegDataSample
    samples = []
    for _ in range(batch):
        sample = SegDataSample(metainfo=dict(img_shape=(size, size), ori_shape=(size, size),
                                             pad_shape=(size, size)))
        sample.gt_sem_seg = PixelData(data=torch.randint(0, classes, (1, size, size)))
        samples.append(sample)
    return dict(inputs=[torch.randint(0, 256, (3, size, size), dtype=torch.uint8) for _ in range(batch)],
                data_samples=samples)


def _det_batch(batch: int, size: int, classes: int) -> dict:
    from mmdet.testing import demo_mm_inputs
    return demo_mm_inputs(batch, [(3, size, size)] * batch, num_items=[5] * batch, num_classes=classes,
                          with_mask=True)


def _optim_wrapper(model, device, task: str):
    """What ``tools/train.py --amp`` would train ``task`` with on ``device`` (vitbench/engine/amp.py decides), and
    its precision."""
    from mmengine.optim import build_optim_wrapper

    from vitbench.engine.amp import amp_plan, cuda_has_bf16
    from vitbench.engine.cpu_amp import cpu_has_fast_bf16
    plan = amp_plan(device.type, task, gpu_bf16=cuda_has_bf16(), cpu_fast_bf16=cpu_has_fast_bf16())
    cfg = dict(type='OptimWrapper', optimizer=dict(type='AdamW', lr=1e-6, weight_decay=0.05))
    cfg.update(plan.wrapper or {})
    return build_optim_wrapper(model, cfg), plan.precision


def bench_dense(args) -> Tuple[List[dict], Dict[str, float]]:
    """``args``: tools/benchmark.py's (device, rounds, iters, warmup, clock and the ``dense_*`` options)."""
    from mmengine.registry import init_default_scope

    import mmseg.models  # noqa: F401  (registers mmseg's models)
    from vitbench.engine.step_meter import peak_memory_mb, time_side_by_side
    init_default_scope('mmseg')
    device = torch.device(args.device)
    arch, batch = args.dense_arch, args.dense_batch
    timed = dict(rounds=args.rounds, iters=args.iters, device=device, clock=args.clock, warmup=args.warmup)
    torch.manual_seed(0)
    rows, ratios = [], {}

    # ------------------------------------------------------------------ UperNet: vitbench's ViT vs mmseg's
    seg = _model(SEG_CONFIG, arch)
    size = args.dense_size or seg['data_preprocessor']['size'][0]
    seg['data_preprocessor']['size'] = (size, size)
    seg['backbone']['img_size'] = size
    theirs = copy.deepcopy(seg)
    theirs['backbone'] = _mmseg_vit(seg['backbone'], size)
    from mmseg.registry import MODELS as SEG_MODELS
    models = {'vitbench': _build(SEG_MODELS, seg, device), 'mmseg_vit': _build(SEG_MODELS, theirs, device)}
    data = _seg_batch(batch, size, seg['decode_head']['num_classes'])
    steps, precision = {}, None
    for name, model in models.items():
        wrapper, precision = _optim_wrapper(model, device, 'seg')
        steps[name] = (lambda m=model, w=wrapper: m.train_step(data, w))
    secs = time_side_by_side(steps, **timed)
    memory = {name: peak_memory_mb(step, device) for name, step in steps.items()}
    for name, model in models.items():
        rows.append(dict(model=f'upernet_{arch}', impl=name, pair='upernet_vs_mmseg_vit', mode='train step',
                         dtype=precision, batch=batch, size=size, device=str(device),
                         params_M=sum(p.numel() for p in model.parameters()) / 1e6,
                         ms_per_iter=1e3 * secs[name][0], ms_per_iter_median=1e3 * secs[name][1],
                         img_per_s=batch / secs[name][0], peak_mem_mb=memory[name]))
    ratios['dense/upernet_vitbench_vs_mmseg_vit_step'] = secs['vitbench'][0] / secs['mmseg_vit'][0]
    if memory['vitbench'] and memory['mmseg_vit']:
        ratios['dense/upernet_vitbench_vs_mmseg_vit_peak_memory'] = memory['vitbench'] / memory['mmseg_vit']
    print(f'  UperNet {arch} {size}px: vitbench {1e3 * secs["vitbench"][0]:.0f} ms vs mmseg ViT '
          f'{1e3 * secs["mmseg_vit"][0]:.0f} ms per step', flush=True)
    del models, steps

    # ------------------------------------------------------------------ Mask R-CNN
    if 'det' in args.dense_tasks:
        import mmdet.models  # noqa: F401
        from mmdet.registry import MODELS as DET_MODELS
        init_default_scope('mmdet')
        det = _model(DET_CONFIG, arch)
        size = args.dense_size or det['data_preprocessor']['pad_size_divisor']  # the LSJ square
        det['data_preprocessor']['pad_size_divisor'] = size
        det['backbone']['img_size'] = size
        model = _build(DET_MODELS, det, device)
        batch = max(1, batch // 2)  # 1024 px crops: half UperNet's batch
        data = _det_batch(batch, size, det['roi_head']['bbox_head']['num_classes'])
        wrapper, precision = _optim_wrapper(model, device, 'det')
        step = {'maskrcnn': lambda: model.train_step(data, wrapper)}
        secs = time_side_by_side(step, **timed)
        rows.append(dict(model=f'maskrcnn_{arch}', impl='vitbench', pair='maskrcnn', mode='train step',
                         dtype=precision, batch=batch, size=size, device=str(device),
                         params_M=sum(p.numel() for p in model.parameters()) / 1e6,
                         ms_per_iter=1e3 * secs['maskrcnn'][0], ms_per_iter_median=1e3 * secs['maskrcnn'][1],
                         img_per_s=batch / secs['maskrcnn'][0], peak_mem_mb=peak_memory_mb(step['maskrcnn'], device)))
        print(f'  Mask R-CNN {arch} {size}px: {1e3 * secs["maskrcnn"][0]:.0f} ms per step ({precision})', flush=True)
    return rows, ratios
