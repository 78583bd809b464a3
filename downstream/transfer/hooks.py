"""``TransferCheckHook``: what every transfer run checks and records on top of ImageNet fine-tuning.

* The classifier has as many outputs as the dataset has classes. A 196-way head on the 10-class demo Cars
  would train without complaint and report a top-5 over classes that do not exist; a head narrower than the
  labels fails deep inside the loss. Both stop here with the two numbers and where they come from.
* ``experiment.eval`` (result.json's ``eval``) is the fine-tuning mode the built model really uses:
  ``full``, ``attention``, ``ffn`` or ``linear`` (read from ``model.trainable``, so a ``--cfg-options`` override of
  the mode cannot leave a wrong record). The same names as the ``finetune.mode`` of an exported backbone.
"""
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper

from vitbench.refusal import RefusalValueError
from vitbench.registry import HOOKS

MODES = dict(all='full', attention='attention', ffn='ffn', linear='linear')


def _model(runner):
    return runner.model.module if is_model_wrapper(runner.model) else runner.model


@HOOKS.register_module()
class TransferCheckHook(Hook):
    priority = 'VERY_HIGH'

    def before_run(self, runner) -> None:
        experiment = runner.cfg.get('experiment')
        trainable = getattr(_model(runner), 'trainable', None)
        if experiment is not None and trainable in MODES:
            experiment['eval'] = MODES[trainable]

    def before_train(self, runner) -> None:
        self._check(runner, runner.train_dataloader.dataset, 'train_dataloader')

    def before_val(self, runner) -> None:
        self._check(runner, runner.val_dataloader.dataset, 'val_dataloader')

    def before_test(self, runner) -> None:
        self._check(runner, runner.test_dataloader.dataset, 'test_dataloader')

    @staticmethod
    def _check(runner, dataset, where: str) -> None:
        classes = dataset.metainfo.get('classes')
        outputs = getattr(getattr(_model(runner), 'backbone', None), 'num_classes', None)
        if classes is None or outputs is None or len(classes) == outputs:
            return
        raise RefusalValueError(
            f'the classifier has {outputs} outputs (model.num_classes) but {where}.dataset '
            f'({type(dataset).__name__} at {getattr(dataset, "data_root", "?")}) has {len(classes)} classes: '
            f'set model.num_classes={len(classes)} and model.data_preprocessor.num_classes={len(classes)} '
            f'(e.g. --cfg-options model.num_classes={len(classes)} model.data_preprocessor.num_classes='
            f'{len(classes)}), or point data_root at the full dataset')
