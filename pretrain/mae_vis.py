"""A PNG of what a masked autoencoder sees and predicts, written after every validation.

``work_dir/vis/mae_iter_<training iteration>.png``: one row per validation image, columns original / masked input /
reconstruction / reconstruction with the visible patches pasted back. The images and their masks are the
same every time (spread over the first validation batch, a fixed seed), so the files show training progress.
"""
import os
import os.path as osp

import torch
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from vitbench.registry import HOOKS

from .mae import patchify, unpatchify


def reconstruction_panels(model, imgs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """(B, 4, 3, H, W) panels in [0, 1] for normalised ``imgs``: original, masked, prediction, pasted."""
    pred, mask, _, _ = model.encode(imgs, generator=generator)
    p, grid = model.patch_size, (imgs.shape[-2] // model.patch_size, imgs.shape[-1] // model.patch_size)
    if model.norm_pix:  # the prediction is per-patch normalised: bring back each patch's mean and variance
        target = patchify(imgs, p)
        pred = pred * (target.var(dim=-1, keepdim=True) + 1e-6) ** .5 + target.mean(dim=-1, keepdim=True)
    pred = unpatchify(pred.float(), p, grid)
    masked = unpatchify(mask[..., None].expand(-1, -1, p * p * 3).float(), p, grid)  # 1 where masked
    preprocessor = model.data_preprocessor
    mean, std = preprocessor.mean.to(imgs.device), preprocessor.std.to(imgs.device)

    def to01(x):
        return ((x * std + mean) / 255).clamp(0, 1)

    original, pred = to01(imgs.float()), to01(pred)
    panels = [original, original * (1 - masked) + 0.5 * masked, pred, original * (1 - masked) + pred * masked]
    return torch.stack(panels, dim=1)


@HOOKS.register_module()
class MAEVisualizationHook(Hook):
    """Args: num_images: rows of the grid (images spread over the first validation batch)."""
    priority = 'LOW'

    def __init__(self, num_images: int = 8):
        self.num_images = num_images
        self._batch = None

    @torch.no_grad()
    def after_val_epoch(self, runner, metrics=None) -> None:
        if runner.rank != 0:
            return
        from torchvision.utils import save_image
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        if self._batch is None:
            inputs = next(iter(runner.val_dataloader))['inputs']
            # spread over the batch: validation sets are sorted by class
            self._batch = dict(inputs=inputs[torch.linspace(0, len(inputs) - 1, self.num_images).long()])
        was_training = model.training
        model.eval()
        imgs = model.data_preprocessor(dict(self._batch), False)['inputs']
        panels = reconstruction_panels(model, imgs, torch.Generator().manual_seed(0))
        model.train(was_training)
        folder = osp.join(runner.work_dir, 'vis')
        os.makedirs(folder, exist_ok=True)
        path = osp.join(folder, f'mae_iter_{runner.iter}.png')
        save_image(panels.flatten(0, 1), path, nrow=4, padding=2, pad_value=1.0)
        runner.logger.info(f'MAE reconstructions saved to {path}')
