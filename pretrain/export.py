"""``work_dir/backbone.pth``: the weights a pre-training or fine-tuning run hands to every other task.

:class:`BackboneExportHook` writes the model's ``backbone`` after training, in the suite's backbone format
(``backbones.save_checkpoint``, atomic), so that ``create_model(arch, checkpoint=path, **overrides)`` and
``init_cfg=dict(type='Pretrained', checkpoint=path)`` load it; and the same tensors as ``backbone.safetensors``
beside it, for readers that load no pickle (the same loaders read it too). ``meta['pretrain']`` records where the
weights come from:

* a pre-training run (``experiment.task='pretrain'``): ``dict(recipe='mae', epochs=<epochs trained>)``, plus
  what else makes it another pre-training (:func:`pretraining_of`): ``data`` when it is not ImageNet-1k's train
  set, ``model`` for backbone overrides that change the model (e.g. ``init_values=None``, no LayerScale);
* a fine-tuning run: the pre-training of the checkpoint it started from (:func:`origin_of`, which every
  run's ``result.json`` reports too), plus
  ``finetune=dict(mode='full'|'attention'|'linear', epochs=..., dataset=..., img_size=...)``.

``meta['device_hours']`` is what all the training behind the weights cost (device-hours, as
``vitbench.engine.run_cost`` measures them): the run's own plus what its starting checkpoint carried (nothing
for a run from scratch). Every run started from the file reports it as ``cost.pretrain_device_hours``.
"""
import numbers
import os.path as osp
from typing import Optional, Tuple

from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.runner import EpochBasedTrainLoop

from backbones.checkpoint import CheckpointError, read_checkpoint, save_checkpoint
from backbones.checkpoint.io import safetensors_header, safetensors_path
from backbones.factory import TRAINING_OVERRIDES
from vitbench.engine.run_cost import meter_of
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


IMAGENET = 'imagenet'  # the pre-training data a recipe is on unless it says otherwise


def pretraining_of(experiment: dict) -> dict:
    """What besides recipe and epochs makes a pre-training run another experiment: ``data``, the data it trains
    on when not ImageNet-1k (``experiment.pretrain.data``, e.g. a subset 'imagenet_1percent'; else
    ``experiment.dataset``, e.g. 'imagenet21k'), ``tokenizer``, the visual tokenizer of a BEiT pre-training
    (``experiment.pretrain.tokenizer``), and ``model``, the backbone overrides that change the model rather
    than its training (not ``backbones.factory.TRAINING_OVERRIDES``). Both are left out when there is nothing to
    say, so that the records of plain ImageNet-1k pre-trainings read as before."""
    extra = {}
    data = (experiment.get('pretrain') or {}).get('data') or experiment.get('dataset') or IMAGENET
    if data != IMAGENET:
        extra['data'] = data
    tokenizer = (experiment.get('pretrain') or {}).get('tokenizer')
    if tokenizer:  # a masked-token pre-training's targets (BEiT): another tokenizer is another experiment
        extra['tokenizer'] = tokenizer
    model = {k: v for k, v in sorted((experiment.get('backbone_overrides') or {}).items())
             if k not in TRAINING_OVERRIDES}
    if model:
        extra['model'] = model
    return extra


def origin_of(experiment: dict, cfg) -> Tuple[dict, Optional[float]]:
    """What a run's backbone weights came from, and the device-hours of the training behind them.

    The first: the config's word (``experiment.pretrain``), else the ``meta['pretrain']`` this hook wrote into
    the checkpoint the run starts from, else ``scratch``. The second: that checkpoint's ``meta['device_hours']``;
    None when the run starts from scratch or its checkpoint does not say."""
    checkpoint = experiment.get('checkpoint') or _backbone_checkpoint(cfg)
    meta = _meta_of(checkpoint)
    hours = meta.get('device_hours')
    hours = float(hours) if isinstance(hours, numbers.Real) and not isinstance(hours, bool) else None
    keep = _keep_blocks(cfg)  # only the first k pre-trained blocks loaded (MAE-lite's keep-first-k experiment)
    if experiment.get('pretrain'):  # a pre-training run also says what else sets it apart
        own = pretraining_of(experiment) if experiment.get('task') == 'pretrain' else {}
        return dict(experiment['pretrain'], **own, **keep), hours
    if checkpoint is None:
        return dict(recipe='scratch', epochs=0, checkpoint=None), None
    pretrain = dict(recipe='unknown', epochs=None)
    pretrain.update(meta.get('pretrain') or {})
    pretrain['checkpoint'] = checkpoint
    pretrain.update(keep)
    return pretrain, hours


def _keep_blocks(cfg) -> dict:
    init_cfg = cfg.get('model', {}).get('backbone', {}).get('init_cfg') or {}
    keep = init_cfg.get('keep_blocks') if init_cfg.get('type') == 'Pretrained' else None
    return {} if keep is None else dict(keep_blocks=int(keep))


def _backbone_checkpoint(cfg) -> Optional[str]:
    init_cfg = cfg.get('model', {}).get('backbone', {}).get('init_cfg') or {}
    return init_cfg.get('checkpoint') if init_cfg.get('type') == 'Pretrained' else None


def _meta_of(checkpoint: Optional[str]) -> dict:
    """The ``meta`` of a backbone.pth or backbone.safetensors; {} for other formats, a missing path or a file that
    weights_only loading refuses (provenance is a report: it must not fail the run)."""
    if checkpoint is None or not osp.isfile(checkpoint):
        return {}
    try:  # backbone.safetensors carries the same meta in its header
        content = safetensors_header(checkpoint) if checkpoint.endswith('.safetensors') else read_checkpoint(checkpoint)
    except CheckpointError:
        return {}
    meta = content.get('meta') if isinstance(content, dict) else None
    return meta if isinstance(meta, dict) else {}


@HOOKS.register_module()
class BackboneExportHook(Hook):
    """Args:
        recipe: pre-training recipe for ``meta['pretrain']``; default: ``experiment.pretrain.recipe``, else the
            model's own (``supervised``, ``supervised_distilled``, ``mae``, ``dmae``).
        filename: written into the work dir, with its safetensors copy (``backbone.safetensors``) beside it.
    """
    priority = 'LOW'  # after checkpointing, before ResultRecorderHook (LOWEST) reads the experiment

    def __init__(self, recipe: Optional[str] = None, filename: str = 'backbone.pth'):
        self.recipe, self.filename = recipe, filename
        self._recipe = None

    def before_run(self, runner) -> None:
        meter_of(runner).start()  # the clock of meta['device_hours'], shared with result.json's cost

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
        """``backbone.pth``'s ``meta`` entries: ``pretrain`` and ``device_hours`` (see the module docstring)."""
        experiment = runner.cfg.get('experiment') or {}
        origin, origin_hours = origin_of(experiment, runner.cfg)
        hours = meter_of(runner).totals(runner)['device_hours'] + (origin_hours or 0.0)
        if experiment.get('task', 'pretrain') == 'pretrain':
            pretrain = dict(recipe=self._recipe, epochs=trained_epochs(runner), **pretraining_of(experiment))
            return dict(pretrain=pretrain, device_hours=hours)
        origin.pop('checkpoint', None)
        model = self._model(runner)
        patch_embed = getattr(model.backbone, 'patch_embed', None)  # a timm convnet has none: no fixed size
        origin['finetune'] = dict(mode=getattr(model, 'trainable', 'all').replace('all', 'full'),
                                  epochs=trained_epochs(runner), dataset=experiment.get('dataset'),
                                  img_size=list(patch_embed.img_size) if patch_embed is not None else None)
        return dict(pretrain=origin, device_hours=hours)

    def after_train(self, runner) -> None:
        meter_of(runner).stop()  # training ends here, so that result.json reports the same device-hours
        if runner.rank != 0:
            return
        model = self._model(runner)
        path = osp.join(runner.work_dir, self.filename)
        # the .pth first: a run killed between the two has no result.json yet, so it is not done and exports again
        save_checkpoint(path, model.backbone, arch=model.arch, overrides=dict(model.backbone_overrides),
                        meta=self.provenance(runner), safetensors=True)
        runner.logger.info(f'backbone exported to {path} and {safetensors_path(path)}')
