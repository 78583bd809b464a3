"""``work_dir/backbone.pth``: the weights a pre-training or fine-tuning run hands to every other task.

:class:`BackboneExportHook` writes the model's ``backbone`` after training, in the suite's backbone format
(``backbones.save_checkpoint``, atomic), so that ``create_model(arch, checkpoint=path, **overrides)`` and
``init_cfg=dict(type='Pretrained', checkpoint=path)`` load it. ``meta['pretrain']`` records where the
weights come from:

* a pre-training run (``experiment.task='pretrain'``): ``dict(recipe='mae', epochs=<epochs trained>)``;
* a fine-tuning run: the pre-training of the checkpoint it started from (:func:`pretrain_of`, which every
  run's ``result.json`` reports too), plus
  ``finetune=dict(mode='full'|'attention'|'linear', epochs=..., dataset=..., img_size=...)``.
"""
import os.path as osp
from typing import Optional

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import EpochBasedTrainLoop

from backbones.checkpoint import read_checkpoint, save_checkpoint
from vitbench.registry import HOOKS


def trained_epochs(runner) -> int:
    """Epochs the run trained for (iteration-based loops: whole passes over the training data)."""
    if isinstance(runner.train_loop, EpochBasedTrainLoop):
        return int(runner.epoch)
    return int(runner.iter // max(len(runner.train_dataloader), 1))


def planned_epochs(runner) -> int:
    loop = runner.train_loop
    if isinstance(loop, EpochBasedTrainLoop):
        return int(loop.max_epochs)
    return int(loop.max_iters // max(len(runner.train_dataloader), 1))


def pretrain_of(experiment: dict, cfg) -> dict:
    """What a run's backbone weights came from: the config's word (``experiment.pretrain``), else the
    ``meta['pretrain']`` this hook wrote into the checkpoint the run starts from, else ``scratch``."""
    if experiment.get('pretrain'):
        return dict(experiment['pretrain'])
    checkpoint = experiment.get('checkpoint') or _backbone_checkpoint(cfg)
    if checkpoint is None:
        return dict(recipe='scratch', epochs=0, checkpoint=None)
    pretrain = dict(recipe='unknown', epochs=None)
    if osp.isfile(checkpoint):
        meta = read_checkpoint(checkpoint)
        if isinstance(meta, dict):
            pretrain.update((meta.get('meta') or {}).get('pretrain') or {})
    pretrain['checkpoint'] = checkpoint
    return pretrain


def _backbone_checkpoint(cfg) -> Optional[str]:
    init_cfg = cfg.get('model', {}).get('backbone', {}).get('init_cfg') or {}
    return init_cfg.get('checkpoint') if init_cfg.get('type') == 'Pretrained' else None


@HOOKS.register_module()
class BackboneExportHook(Hook):
    """Args:
        recipe: pre-training recipe for ``meta['pretrain']``; default: ``experiment.pretrain.recipe``, else the
            model's own (``supervised``, ``supervised_distilled``, ``mae``, ``dmae``).
        filename: written into the work dir.
    """
    priority = 'LOW'  # after checkpointing, before ResultRecorderHook (LOWEST) reads the experiment

    def __init__(self, recipe: Optional[str] = None, filename: str = 'backbone.pth'):
        self.recipe, self.filename = recipe, filename
        self._recipe = None

    def before_train(self, runner) -> None:
        model = self._model(runner)
        if not all(hasattr(model, a) for a in ('backbone', 'arch', 'backbone_overrides')):
            raise TypeError(f'BackboneExportHook: {type(model).__name__} has no backbone / arch / '
                            'backbone_overrides attributes to export')
        experiment = runner.cfg.get('experiment') or {}
        pretrain = experiment.get('pretrain')
        if experiment.get('task', 'pretrain') == 'pretrain':
            self._recipe = self.recipe or (pretrain or {}).get('recipe') or getattr(model, 'recipe', None)
            if not self._recipe:
                raise ValueError('BackboneExportHook: name the pre-training recipe (hook argument `recipe` or '
                                 'experiment.pretrain.recipe)')
            if pretrain:  # result.json reports what the run does, even when --cfg-options changed the schedule
                pretrain['epochs'] = planned_epochs(runner)

    @staticmethod
    def _model(runner):
        return runner.model.module if is_model_wrapper(runner.model) else runner.model

    def provenance(self, runner) -> dict:
        experiment = runner.cfg.get('experiment') or {}
        if experiment.get('task', 'pretrain') == 'pretrain':
            return dict(recipe=self._recipe, epochs=trained_epochs(runner))
        origin = {k: v for k, v in pretrain_of(experiment, runner.cfg).items() if k != 'checkpoint'}
        model = self._model(runner)
        origin['finetune'] = dict(mode=getattr(model, 'trainable', 'all').replace('all', 'full'),
                                  epochs=trained_epochs(runner), dataset=experiment.get('dataset'),
                                  img_size=list(model.backbone.patch_embed.img_size))
        return origin

    def after_train(self, runner) -> None:
        if runner.rank != 0:
            return
        model = self._model(runner)
        path = osp.join(runner.work_dir, self.filename)
        save_checkpoint(path, model.backbone, arch=model.arch, overrides=dict(model.backbone_overrides),
                        meta=dict(pretrain=self.provenance(runner)))
        runner.logger.info(f'backbone exported to {path}')
