"""``create_model`` / ``list_models``: build a named variant, optionally loading a checkpoint; ``timm:NAME``
builds timm's model instead (``backbones/timm_backbones.py``)."""
import copy
import difflib
import fnmatch
import inspect
from typing import List, Optional

from torch import nn

from .family import Family, get_family
from .timm_backbones import create_timm_model, is_timm_name, timm_model_name
from .variants import VARIANTS


def list_models(pattern: str = '*') -> List[str]:
    """Sorted variant names matching a shell-style ``pattern`` (e.g. 'deit3_*')."""
    return sorted(n for n in VARIANTS if fnmatch.fnmatch(n, pattern))


def suite_variant_of(timm_name: str) -> Optional[str]:
    """The suite's variant of the same architecture as timm's model ``timm_name``, or None: a variant of the same
    name (``deit3_base_patch16_224``), or whose name with its resolution is timm's (``resmlp_12`` is timm's
    ``resmlp_12_224``). The pairs have the same parameters (tests/test_backbones_tools.py counts them) and the
    checkpoint loader reads timm's state dicts, so either name loads the other's weights."""
    bare = timm_name[len('timm:'):] if is_timm_name(timm_name) else timm_name
    bare = bare.split('.')[0]  # a pretrained tag ('.fb_in1k') names weights, not an architecture
    if bare in VARIANTS:
        return bare
    return next((name for name, entry in VARIANTS.items()
                 if f"{name}_{entry['kwargs'].get('img_size')}" == bare), None)


def family_of(name: str) -> str:
    """The family of a named variant ('vit', 'cait', ...: any registered family, backbones/family.py; the
    package's own are registered when ``backbones`` is imported), 'timm' for ``timm:NAME``; unknown names raise a
    KeyError listing the closest ones."""
    if is_timm_name(name):
        timm_model_name(name)
        return 'timm'
    return get_variant(name)['model']


def family_record(name: str) -> Family:
    """The family record of variant (or ``timm:NAME``) ``name``: what every consumer asks of a backbone."""
    return get_family(family_of(name))


def model_class_of(name: str) -> type:
    """The class variant ``name`` builds."""
    return family_record(name).model_class


def get_variant(name: str) -> dict:
    """The variant's table entry (a copy); unknown names raise a KeyError listing the closest names."""
    if name not in VARIANTS:
        close = difflib.get_close_matches(name, VARIANTS, n=5, cutoff=0.5)
        hint = f"did you mean {', '.join(close)}? " if close else ''
        raise KeyError(f"unknown backbone {name!r}: {hint}valid names: {', '.join(list_models())} "
                       f"(tools/list_backbones.py prints them with sizes; a family of your own registers its "
                       f"variants when its module is imported: custom_imports, docs/extending-backbone.md)")
    return copy.deepcopy(VARIANTS[name])


# create_model() overrides that change how a model is trained or run, not which model it is; a backbone trained
# with any other override (init_values=None: no LayerScale, a depth, a width) is another model, and the leaderboard
# tells its pre-training apart (pretrain.export.pretraining_of)
TRAINING_OVERRIDES = frozenset({'drop_path_rate', 'drop_path_uniform', 'drop_rate', 'attn_drop_rate', 'img_size',
                                'global_pool', 'with_cp'})


def variant_kwargs(name: str, **overrides) -> dict:
    """Constructor arguments of variant ``name`` with ``overrides`` applied (checked against the class)."""
    cls = model_class_of(name)
    kwargs = dict(get_variant(name)['kwargs'], **overrides)
    accepted = set(inspect.signature(cls.__init__).parameters) - {'self'}
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise TypeError(f"{name}: unknown argument(s) {unknown} for {cls.__name__}; "
                        f"accepted: {sorted(accepted)}")
    return kwargs


def create_model(name: str, num_classes: int = 1000, checkpoint: Optional[str] = None,
                 **overrides) -> nn.Module:
    """Build the named variant; ``overrides`` replace its constructor arguments (img_size, drop_path_rate,
    global_pool, num_parallel, stem, ...).

    ``checkpoint``: a file in any supported format (official DeiT / DeiT III / CaiT / ResMLP / PatchConvNet /
    MAE / MAE-lite, timm, vitbench ``backbone.pth``, mmengine runner checkpoints); see
    :func:`backbones.load_checkpoint`. ``timm:NAME``: timm's model, loaded by timm (``pretrained=True``: from the
    local Hugging Face cache).
    """
    if is_timm_name(name):
        return create_timm_model(name, num_classes=num_classes, checkpoint=checkpoint, **overrides)
    if overrides.pop('pretrained', False):
        raise ValueError(f"{name}: pretrained=True: the suite's variants load the official files with "
                         f"checkpoint=PATH (nothing is downloaded); timm:NAME models read the local Hugging Face "
                         f"cache with pretrained=True")
    model = model_class_of(name)(**variant_kwargs(name, num_classes=num_classes, **overrides))
    model.arch = name
    if checkpoint is not None:
        from .checkpoint import load_checkpoint
        load_checkpoint(model, checkpoint)
    return model
