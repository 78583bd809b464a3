# Runtime of every classification-transfer config: the ImageNet one (configs/_base_/imagenet_runtime.py), with
# TransferCheckHook instead of the backbone export (a transfer run's product is its result.json). The hook
# checks that the head has as many outputs as the dataset has classes and records the fine-tuning mode
# (full | attention | linear, from model.trainable) as result.json's `eval`.
_base_ = ['./imagenet_runtime.py']

custom_hooks = [dict(type='TransferCheckHook')]
val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_evaluator = val_evaluator
val_cfg = dict()
test_cfg = dict()
