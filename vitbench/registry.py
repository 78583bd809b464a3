"""The ``vitbench`` registries: children of mmengine's root registries, with scope ``vitbench``.

Every backbone, neck, model, dataset, transform, metric, hook and optimizer piece of the suite registers
here. Because each registry is a child of mmengine's root, a component is reachable from any OpenMMLab
scope as ``type='vitbench.Name'`` (e.g. from an mmseg or mmdet config, after
``custom_imports=dict(imports=['backbones', 'downstream'])``), and from a config with
``default_scope='vitbench'`` as plain ``type='Name'``.

As in mmpretrain's ``registry.py``, each registry names the modules that register into it (``locations``):
mmengine imports them the first time the registry is searched. Those are strings, not imports: importing
this module imports nothing of the suite and changes nothing else. They name the suite's layer packages and
their modules, never a task: ``downstream`` imports its task packages itself. A task from outside the suite
registers its modules as any OpenMMLab extension does, by its configs' ``custom_imports``. The module lives at
``vitbench.registry`` because mmengine imports ``<scope>.registry`` itself when it meets a ``vitbench.`` type or
default scope.
"""
from mmengine.registry import DATA_SAMPLERS as MMENGINE_DATA_SAMPLERS
from mmengine.registry import DATASETS as MMENGINE_DATASETS
from mmengine.registry import EVALUATOR as MMENGINE_EVALUATOR
from mmengine.registry import FUNCTIONS as MMENGINE_FUNCTIONS
from mmengine.registry import HOOKS as MMENGINE_HOOKS
from mmengine.registry import LOG_PROCESSORS as MMENGINE_LOG_PROCESSORS
from mmengine.registry import LOOPS as MMENGINE_LOOPS
from mmengine.registry import METRICS as MMENGINE_METRICS
from mmengine.registry import MODEL_WRAPPERS as MMENGINE_MODEL_WRAPPERS
from mmengine.registry import MODELS as MMENGINE_MODELS
from mmengine.registry import OPTIM_WRAPPER_CONSTRUCTORS as MMENGINE_OPTIM_WRAPPER_CONSTRUCTORS
from mmengine.registry import OPTIM_WRAPPERS as MMENGINE_OPTIM_WRAPPERS
from mmengine.registry import OPTIMIZERS as MMENGINE_OPTIMIZERS
from mmengine.registry import PARAM_SCHEDULERS as MMENGINE_PARAM_SCHEDULERS
from mmengine.registry import RUNNERS as MMENGINE_RUNNERS
from mmengine.registry import TASK_UTILS as MMENGINE_TASK_UTILS
from mmengine.registry import TRANSFORMS as MMENGINE_TRANSFORMS
from mmengine.registry import VISBACKENDS as MMENGINE_VISBACKENDS
from mmengine.registry import VISUALIZERS as MMENGINE_VISUALIZERS
from mmengine.registry import WEIGHT_INITIALIZERS as MMENGINE_WEIGHT_INITIALIZERS
from mmengine.registry import Registry

SCOPE = 'vitbench'


def _child(name, parent, locations=()):
    """A child of mmengine's ``parent`` in the vitbench scope; ``locations`` are the modules that register
    into it, imported when the registry is first searched (so ``type='vitbench.X'`` finds X)."""
    return Registry(name, parent=parent, scope=SCOPE, locations=list(locations))


RUNNERS = _child('runner', MMENGINE_RUNNERS)
LOOPS = _child('loop', MMENGINE_LOOPS, ['pretrain.extra_eval'])
# The harness' own hooks (result.json, param_groups.json, divergence) are not located from here: the core names
# nothing above the tasks; harness.experiment.cli imports them before it adds them to a run.
HOOKS = _child('hook', MMENGINE_HOOKS, ['pretrain.export', 'pretrain.mae_vis', 'pretrain.mocov3', 'pretrain.dino',
                                        'vitbench.engine.run_state',
                                        'vitbench.engine.verified_checkpoint_hook', 'downstream'])
DATASETS = _child('dataset', MMENGINE_DATASETS, ['pretrain.data', 'pretrain.imagenet_variants', 'pretrain.imagenet21k',
                                                 'pretrain.robustness', 'downstream'])
DATA_SAMPLERS = _child('data sampler', MMENGINE_DATA_SAMPLERS, ['pretrain.samplers'])
TRANSFORMS = _child('transform', MMENGINE_TRANSFORMS, ['pretrain.transforms', 'pretrain.ssl_transforms',
                                                     'downstream'])
MODELS = _child('model', MMENGINE_MODELS, ['backbones.dense', 'backbones.timm_backbones', 'pretrain.classifier',
                                           'pretrain.preprocessor', 'pretrain.mae', 'pretrain.dmae', 'pretrain.mocov3', 'pretrain.dino',
                                           'downstream'])
MODEL_WRAPPERS = _child('model_wrapper', MMENGINE_MODEL_WRAPPERS, ['pretrain.dino'])
WEIGHT_INITIALIZERS = _child('weight initializer', MMENGINE_WEIGHT_INITIALIZERS)
OPTIMIZERS = _child('optimizer', MMENGINE_OPTIMIZERS, ['pretrain.optim'])
OPTIM_WRAPPERS = _child('optim_wrapper', MMENGINE_OPTIM_WRAPPERS, ['vitbench.engine.amp', 'vitbench.engine.cpu_amp'])
OPTIM_WRAPPER_CONSTRUCTORS = _child('optimizer wrapper constructor', MMENGINE_OPTIM_WRAPPER_CONSTRUCTORS,
                                    ['vitbench.engine.layer_decay'])
PARAM_SCHEDULERS = _child('parameter scheduler', MMENGINE_PARAM_SCHEDULERS)
METRICS = _child('metric', MMENGINE_METRICS, ['pretrain.metrics', 'pretrain.robustness_metrics',
                                              'downstream'])
EVALUATOR = _child('evaluator', MMENGINE_EVALUATOR)
TASK_UTILS = _child('task util', MMENGINE_TASK_UTILS)
VISUALIZERS = _child('visualizer', MMENGINE_VISUALIZERS)
VISBACKENDS = _child('vis_backend', MMENGINE_VISBACKENDS)
LOG_PROCESSORS = _child('log_processor', MMENGINE_LOG_PROCESSORS)
FUNCTIONS = _child('function', MMENGINE_FUNCTIONS)
