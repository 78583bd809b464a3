"""Fitting the suite's BEiT tokenizer (:class:`pretrain.beit_tokenizer.KMeansTokenizer`) from a pre-training config:
its training set, its tokenizer view (``BEiTMaskedViews``' ``second_size``, on the patch grid) and the tokenizer's
``vocab_size``, ``seed`` and ``max_images``. Each chosen image is resized and centre-cropped to the tokenizer
view (no augmentation), normalised as the training normalises it ((x / 255 - 0.5) / 0.5), and cut into patches
of side second_size / grid; k-means runs on all of them. The images are a seeded random choice of ``max_images``
(all of them without it), so the file is the same for the same config and data.
"""
from typing import Callable, Optional

import torch
from mmengine.config import Config

from vitbench.registry import DATASETS

from .beit_tokenizer import fit_kmeans, save_codebook
from .mae import patchify


def _views_step(cfg: Config) -> dict:
    steps = [t for t in cfg.train_dataloader.dataset.pipeline if t.get('type') == 'BEiTMaskedViews']
    if len(steps) != 1:
        raise ValueError("tokenizer fit: the config's train_dataloader.dataset.pipeline needs one BEiTMaskedViews "
                         'step (the tokenizer view)')
    return steps[0]


def fit_tokenizer(cfg: Config, log: Callable[[str], None] = print, batch: int = 64) -> str:
    """Fit ``cfg.model.tokenizer`` (a ``KMeansTokenizer``) and write its ``checkpoint``. Returns that path."""
    tok = dict(cfg.model.tokenizer)
    if tok.get('type') != 'KMeansTokenizer':
        raise ValueError(f"tokenizer fit: model.tokenizer.type is {tok.get('type')!r}; only KMeansTokenizer is fitted "
                         'here (DALL-E weights are given as a file)')
    for key in ('checkpoint', 'vocab_size'):
        if not tok.get(key):
            raise ValueError(f'tokenizer fit: model.tokenizer.{key} is not set')
    views = _views_step(cfg)
    size, second, patch = views.get('size', 224), views.get('second_size', 112), views.get('patch_size', 16)
    grid = size // patch
    if second % grid:
        raise ValueError(f'tokenizer fit: second_size {second} is not a multiple of the {grid}x{grid} patch grid')
    seed, max_images = int(tok.get('seed', 0)), tok.get('max_images')
    data = dict(cfg.train_dataloader.dataset)
    data['pipeline'] = [dict(type='LoadImage'), dict(type='ResizeCenterCrop', size=second, crop_pct=1.0),
                        dict(type='PackInputs')]
    dataset = DATASETS.build(data)
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed))
    chosen = order[:max_images] if max_images else order
    chosen = sorted(chosen.tolist())
    log(f'tokenizer fit: {len(chosen)} of {len(dataset)} images at {second} px, {second // grid}-pixel patches, '
        f"vocab {tok['vocab_size']}, seed {seed}")
    patches = []
    for start in range(0, len(chosen), batch):
        imgs = torch.stack([dataset[i]['inputs'] for i in chosen[start:start + batch]]).float()
        patches.append(patchify(imgs / 127.5 - 1, second // grid).flatten(0, 1))
    codebook = fit_kmeans(torch.cat(patches), int(tok['vocab_size']), seed=seed)
    save_codebook(tok['checkpoint'], codebook, second // grid, seed, len(chosen))
    log(f"tokenizer fit: wrote {tok['checkpoint']}")
    return tok['checkpoint']


def fit_from_file(config: str, cfg_options: Optional[dict] = None, **kwargs) -> str:
    cfg = Config.fromfile(config)
    if cfg_options:
        cfg.merge_from_dict(cfg_options)
    return fit_tokenizer(cfg, **kwargs)
